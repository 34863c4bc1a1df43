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
	if real != filepath.Clean(p) {
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

// Resolve cleans the absolute path p and evaluates the symlinks of its
// longest existing prefix; the part that does not exist yet is appended as
// is (after Clean it has no "..").
func Resolve(p string) (string, error) {
	p = filepath.Clean(p)
	var rest []string
	for cur := p; ; cur = filepath.Dir(cur) {
		if _, err := os.Lstat(cur); err == nil {
			real, err := filepath.EvalSymlinks(cur)
			if err != nil {
				return "", fmt.Errorf("%w %q: %v", ErrUnresolvable, p, err)
			}
			for i := len(rest) - 1; i >= 0; i-- {
				real = filepath.Join(real, rest[i])
			}
			return real, nil
		} else if !errors.Is(err, os.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR) {
			// ENOTDIR (a component is a file) is as good as missing here:
			// where the path points is decided; whether it is usable is the
			// caller's check.
			return "", fmt.Errorf("%w %q: %v", ErrUnresolvable, p, err)
		}
		if parent := filepath.Dir(cur); parent == cur {
			return p, nil // nothing exists, not even the root directory
		}
		rest = append(rest, filepath.Base(cur))
	}
}
