package confine

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"golang.org/x/sys/unix"
)

// errNoRoot is a path no existing root holds.
var errNoRoot = errors.New("no root holds it")

// Open opens the absolute path p for reading; see OpenFile.
func (r Roots) Open(p string) (*os.File, error) { return r.OpenFile(p, os.O_RDONLY, 0) }

// OpenFile is os.OpenFile for a path that must stay under the roots where it
// is opened, not only where it was checked: p is resolved by the kernel
// beneath the deepest existing root that holds it (openat2 RESOLVE_BENEATH,
// or a walk by hand), so that a symlink or ".." placed since, in the part
// below the root, cannot lead out. A symlink that leaves that root (an
// absolute one always does) is followed by hand once and the path it leads
// to opened beneath its own root. A path that leads out of every root is
// refused with an error wrapping ErrOutside that names p and the roots.
func (r Roots) OpenFile(p string, flag int, perm os.FileMode) (*os.File, error) {
	fd, err := r.open(p, flag, uint32(perm.Perm()))
	if err != nil {
		return nil, err
	}
	return os.NewFile(uintptr(fd), filepath.Clean(p)), nil
}

// ReadFile is os.ReadFile through OpenFile.
func (r Roots) ReadFile(p string) ([]byte, error) {
	f, err := r.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}

// Check opens p as OpenFile would (following its last symlink) and closes
// it: whether p, as it is now, is under the roots.
func (r Roots) Check(p string) error {
	fd, err := r.open(p, unix.O_PATH, 0)
	if err == nil {
		unix.Close(fd)
	}
	return err
}

// Remove is os.Remove for a path that must stay under the roots: the entry
// is unlinked (unlinkat, never following it) in its directory opened as
// OpenFile opens it.
func (r Roots) Remove(p string) error {
	p = filepath.Clean(p)
	dirfd, err := r.open(filepath.Dir(p), unix.O_PATH|unix.O_DIRECTORY, 0)
	if err != nil {
		return err
	}
	defer unix.Close(dirfd)
	if err := unix.Unlinkat(dirfd, filepath.Base(p), 0); err != nil {
		return &fs.PathError{Op: "remove", Path: p, Err: err}
	}
	return nil
}

// Matches is filepath.Glob(pattern) with every match checked: a match that
// leads out of the roots (a shard symlinked elsewhere since submit) is an
// error naming it. The matches are what a later Open opens, checked again.
func (r Roots) Matches(pattern string) ([]string, error) {
	matches, err := filepath.Glob(pattern)
	if err != nil {
		return nil, fmt.Errorf("%w %q: %v", ErrUnresolvable, pattern, err)
	}
	for _, m := range matches {
		if err := r.Check(m); err != nil {
			return nil, err // names the match
		}
	}
	return matches, nil
}

// MkdirAll is os.MkdirAll for a path that must stay under the roots: each
// missing directory is created (mkdirat) in its parent opened as OpenFile
// opens it. A root that does not exist yet (a job's checkpoint.dir) is
// created, with its missing parents, from "/" with no symlink on its way
// (roots are resolved paths).
func (r Roots) MkdirAll(p string, perm os.FileMode) error {
	p = filepath.Clean(p)
	if _, ok := r.holding(p); !ok {
		// Only a symlink can take p under a root: create where it leads.
		real, err := Resolve(p)
		if _, ok := r.holding(real); err != nil || !ok {
			return r.escape(p, real, errNoRoot)
		}
		p = real
	}
	return mkdirAll(p, r.openDir, uint32(perm.Perm()))
}

// openDir opens dir, which holds or is held by a root, for MkdirAll: as
// OpenFile opens it when a root holds its parent, else (the outermost root
// holding it, or a parent of that) from "/" with no symlink on the way.
func (r Roots) openDir(dir string) (int, error) {
	if _, ok := r.holding(filepath.Dir(dir)); ok && dir != filepath.Dir(dir) {
		return r.open(dir, unix.O_PATH|unix.O_DIRECTORY, 0)
	}
	return openRoot(dir)
}

// mkdirAll creates p and its missing parents, each in its parent opened by
// open, and checks p opens afterwards (a symlink planted meanwhile fails).
func mkdirAll(p string, open func(string) (int, error), perm uint32) error {
	fd, err := open(p)
	if err == nil {
		return unix.Close(fd)
	}
	parent := filepath.Dir(p)
	if !errors.Is(err, fs.ErrNotExist) || parent == p {
		return err
	}
	if err := mkdirAll(parent, open, perm); err != nil {
		return err
	}
	pfd, err := open(parent)
	if err != nil {
		return err
	}
	err = unix.Mkdirat(pfd, filepath.Base(p), perm)
	unix.Close(pfd)
	if err != nil && err != unix.EEXIST {
		return &fs.PathError{Op: "mkdir", Path: p, Err: err}
	}
	if fd, err = open(p); err != nil {
		return err
	}
	return unix.Close(fd)
}

// open resolves p beneath the root that holds it; on an escape it follows
// p's symlinks by hand (Resolve) and opens where they lead beneath the root
// that holds that, if any.
func (r Roots) open(p string, flag int, perm uint32) (int, error) {
	if !filepath.IsAbs(p) {
		return -1, fmt.Errorf("%w %q: not absolute", ErrUnresolvable, p)
	}
	p = filepath.Clean(p)
	fd, err := r.openUnder(p, flag, perm)
	if !escaped(err) {
		return fd, pathError(p, err)
	}
	real, rerr := Resolve(p)
	if rerr != nil || real == p {
		return -1, r.escape(p, p, err)
	}
	fd, err = r.openUnder(real, flag, perm)
	if escaped(err) {
		return -1, r.escape(p, real, err)
	}
	return fd, pathError(p, err)
}

// openUnder opens p beneath the deepest root holding it (by name) that
// exists as a directory reached without symlinks.
func (r Roots) openUnder(p string, flag int, perm uint32) (int, error) {
	roots, _ := r.holding(p)
	var missing error
	for _, root := range roots {
		rootfd, err := openRoot(root)
		if err != nil {
			// Not created yet, or replaced by a symlink: a shorter root
			// may hold p.
			if errors.Is(err, fs.ErrNotExist) {
				missing = err
			}
			continue
		}
		rel, _ := filepath.Rel(root, p)
		fd, err := beneath(rootfd, rel, flag, perm, false)
		unix.Close(rootfd)
		return fd, err
	}
	if missing != nil {
		return -1, missing // p's root is still to be created
	}
	return -1, errNoRoot
}

// openRoot opens the directory root (absolute, resolved) from "/" refusing
// every symlink on the way: a root is where it was when it was resolved, or
// not at all.
func openRoot(root string) (int, error) {
	slash, err := unix.Open("/", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, err
	}
	defer unix.Close(slash)
	fd, err := beneath(slash, root[1:], unix.O_PATH|unix.O_DIRECTORY, 0, true)
	return fd, pathError(root, err)
}

// holding lists the roots that hold p by name, deepest first.
func (r Roots) holding(p string) ([]string, bool) {
	var out []string
	for _, d := range r.dirs {
		if Within(d, p) {
			out = append(out, d)
		}
	}
	slices.SortFunc(out, func(a, b string) int { return len(b) - len(a) })
	return out, len(out) > 0
}

func escaped(err error) bool {
	return errors.Is(err, errNoRoot) || errors.Is(err, unix.EXDEV) || errors.Is(err, unix.ELOOP)
}

func pathError(p string, err error) error {
	if err == nil {
		return nil
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return err
	}
	return &fs.PathError{Op: "open", Path: p, Err: err}
}

// escape says p leads out of the roots (through real, where it resolved).
func (r Roots) escape(p, real string, cause error) error {
	via := ""
	if real != p {
		via = fmt.Sprintf(" (it leads to %s)", real)
	}
	if errors.Is(cause, unix.ELOOP) && !errors.Is(cause, errNoRoot) {
		via += " (or a symlink loops)"
	}
	return fmt.Errorf("%q is %w%s: the job may only open paths under %s; remove the symlink or move the file under one of them",
		p, ErrOutside, via, r)
}
