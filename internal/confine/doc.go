// Package confine keeps the paths of a job spec under the directories an
// agent allows (issue 10, "Confined paths"): a path is cleaned, made
// absolute, its symlinks are evaluated on its longest existing prefix, and
// the result must lie under one of the roots, whose own symlinks are
// evaluated too. `..` escapes and symlinks out of a root are thereby caught;
// the resolved path is what the job should use from then on, so that a
// symlink in the part that existed cannot be swapped later.
//
// It reads the file system (Lstat, EvalSymlinks, Glob) but never writes.
package confine
