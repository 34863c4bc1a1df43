package confine

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

var (
	// ErrOutside is a path that does not lie under any allowed root.
	ErrOutside = errors.New("outside the allowed paths")
	// ErrUnresolvable is a path whose symlinks cannot be evaluated (a
	// dangling or looping symlink, a component that is not a directory).
	ErrUnresolvable = errors.New("cannot resolve the path")
)

// Roots are the directories paths must lie under, symlinks evaluated.
type Roots struct{ dirs []string }

// NewRoots resolves each directory (which need not exist yet); empty
// entries are skipped and duplicates kept once.
func NewRoots(dirs ...string) (Roots, error) {
	var r Roots
	for _, d := range dirs {
		if d == "" {
			continue
		}
		abs, err := filepath.Abs(d)
		if err != nil {
			return Roots{}, fmt.Errorf("allowed path %q: %w", d, err)
		}
		real, err := Resolve(abs)
		if err != nil {
			return Roots{}, fmt.Errorf("allowed path %q: %w", d, err)
		}
		r = r.With(real)
	}
	return r, nil
}

// With is r plus dir, which must already be resolved.
func (r Roots) With(dir string) Roots {
	for _, d := range r.dirs {
		if d == dir {
			return r
		}
	}
	return Roots{dirs: append(append([]string(nil), r.dirs...), dir)}
}

// Dirs lists the roots.
func (r Roots) Dirs() []string { return append([]string(nil), r.dirs...) }

// String lists the roots for a message.
func (r Roots) String() string {
	if len(r.dirs) == 0 {
		return "none"
	}
	return strings.Join(r.dirs, ", ")
}

// Path resolves the absolute path p and checks it lies under a root. It
// returns the resolved path; errors wrap ErrOutside or ErrUnresolvable and
// name p and the roots.
func (r Roots) Path(p string) (string, error) {
	if !filepath.IsAbs(p) {
		return "", fmt.Errorf("%w %q: not absolute", ErrUnresolvable, p)
	}
	real, err := Resolve(p)
	if err != nil {
		return "", err
	}
	if !r.contains(real) {
		return "", r.outside(p, real)
	}
	return real, nil
}

func (r Roots) outside(p, real string) error {
	if real != p {
		return fmt.Errorf("%q (which resolves to %s) is %w of this agent (%s)", p, real, ErrOutside, r)
	}
	return fmt.Errorf("%q is %w of this agent (%s)", p, ErrOutside, r)
}

func (r Roots) contains(p string) bool {
	for _, d := range r.dirs {
		if Within(d, p) {
			return true
		}
	}
	return false
}

// Within reports whether p is dir or lies under it; both must be clean and
// absolute.
func Within(dir, p string) bool {
	rel, err := filepath.Rel(dir, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// Resolve evaluates the absolute path p as the kernel would: the symlinks
// (and any ".." after them) of its longest existing prefix are evaluated,
// and the part that does not exist yet is appended cleaned. A ".." in that
// missing part is refused: where it leads depends on what is created first
// (a missing part under a symlink created later would lead elsewhere), so
// where the job's files would be created cannot be checked.
func Resolve(p string) (string, error) {
	if !filepath.IsAbs(p) {
		return "", fmt.Errorf("%w %q: not absolute", ErrUnresolvable, p)
	}
	parts := strings.Split(p, string(filepath.Separator))
	n := len(parts)
	for ; n > 1; n-- {
		_, err := os.Lstat(strings.Join(parts[:n], string(filepath.Separator)))
		if err == nil {
			break
		}
		// ENOTDIR (a component is a file) is as good as missing here:
		// where the path points is decided; whether it is usable is the
		// caller's check.
		if !errors.Is(err, os.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR) {
			return "", fmt.Errorf("%w %q: %v", ErrUnresolvable, p, err)
		}
	}
	real := string(filepath.Separator)
	if n > 1 {
		var err error
		if real, err = filepath.EvalSymlinks(strings.Join(parts[:n], string(filepath.Separator))); err != nil {
			return "", fmt.Errorf("%w %q: %v", ErrUnresolvable, p, err)
		}
	}
	for _, part := range parts[n:] {
		if part == ".." {
			return "", fmt.Errorf("%w %q: \"..\" follows %s, which does not exist yet: give the path without it",
				ErrUnresolvable, p, strings.Join(parts[:n], string(filepath.Separator)))
		}
		real = filepath.Join(real, part)
	}
	return real, nil
}
