// Package atomicfile replaces files, directories and symlinks so that a
// reader sees either the old or the whole new one, and so that a crash once
// the call returned does not lose the new name. Every operation builds the
// new entry under a temporary name in the destination's directory, fsyncs it,
// renames it into place and fsyncs the directory.
//
// Temporary names are "." + final name + ".tmp-" + random suffix: the leading
// dot keeps them out of globs over final names (shard patterns, checkpoint
// listings), and an owner can recognise what a crashed writer left behind.
//
// A directory that cannot be fsynced at all (EINVAL, ENOTSUP: some network
// and FUSE filesystems) is accepted, since nothing more can be done there;
// any other fsync failure is reported.
//
// It is shared plumbing: it must not know what the files contain, who owns
// them, or when old ones may be deleted.
package atomicfile
