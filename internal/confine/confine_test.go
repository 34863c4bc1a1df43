package confine

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fixture is a root with data, a symlink out of it and one inside it.
func fixture(t *testing.T) (root, outside string, r Roots) {
	t.Helper()
	base := t.TempDir()
	root, outside = filepath.Join(base, "root"), filepath.Join(base, "outside")
	for _, d := range []string{filepath.Join(root, "data"), outside} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{filepath.Join(root, "data", "train-0"), filepath.Join(outside, "train-9")} {
		if err := os.WriteFile(f, []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	mustSymlink(t, outside, filepath.Join(root, "out"))
	mustSymlink(t, filepath.Join(root, "data"), filepath.Join(root, "in"))
	mustSymlink(t, filepath.Join(outside, "train-9"), filepath.Join(root, "data", "train-9"))
	mustSymlink(t, filepath.Join(outside, "gone"), filepath.Join(root, "dangling"))
	// The root is named through a symlink too: it is resolved like the paths.
	link := filepath.Join(base, "root-link")
	mustSymlink(t, root, link)
	r, err := NewRoots(link)
	if err != nil {
		t.Fatal(err)
	}
	return root, outside, r
}

func mustSymlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

func TestPath(t *testing.T) {
	root, outside, r := fixture(t)
	for _, tc := range []struct{ path, want string }{
		{root, root},
		{filepath.Join(root, "data"), filepath.Join(root, "data")},
		{filepath.Join(root, "new", "deeper"), filepath.Join(root, "new", "deeper")},
		{filepath.Join(root, "in", "ckpt"), filepath.Join(root, "data", "ckpt")},
		{filepath.Join(root, "data", "..", "x"), filepath.Join(root, "x")},
		{filepath.Join(root, "data", "train-0", "x"), filepath.Join(root, "data", "train-0", "x")}, // under a file: placement's problem
	} {
		got, err := r.Path(tc.path)
		if err != nil || got != tc.want {
			t.Errorf("Path(%s) = %q, %v; want %q", tc.path, got, err, tc.want)
		}
	}
	for _, tc := range []struct {
		path string
		want error
	}{
		{"/etc/gtrain-pwn", ErrOutside},
		{filepath.Join(root, "..", "..", "x"), ErrOutside},
		{filepath.Join(root, "out", "ckpt"), ErrOutside},
		{filepath.Join(root, "in", "..", "..", "outside"), ErrOutside},
		{filepath.Join(root, "dangling", "ckpt"), ErrUnresolvable},
		{"relative/x", ErrUnresolvable},
	} {
		_, err := r.Path(tc.path)
		if !errors.Is(err, tc.want) {
			t.Errorf("Path(%s) = %v, want %v", tc.path, err, tc.want)
			continue
		}
		if !strings.Contains(err.Error(), tc.path) {
			t.Errorf("Path(%s): %q does not name the path", tc.path, err)
		}
		if tc.want == ErrOutside && !strings.Contains(err.Error(), root) {
			t.Errorf("Path(%s): %q does not name the allowed root %s", tc.path, err, root)
		}
	}
	_ = outside
}

func TestGlob(t *testing.T) {
	root, outside, r := fixture(t)
	got, err := r.Glob(filepath.Join(root, "in", "train-0*"))
	if want := filepath.Join(root, "data", "train-0*"); err != nil || got != want {
		t.Errorf("Glob through a symlink inside = %q, %v; want %q", got, err, want)
	}
	for _, pattern := range []string{
		filepath.Join(root, "data", "train-*"), // matches train-9, a symlink out
		filepath.Join(root, "out", "train-*"),
		filepath.Join(root, "*", "train-9"),
		filepath.Join(outside, "train-*"),
		"/etc/*",
	} {
		if _, err := r.Glob(pattern); !errors.Is(err, ErrOutside) {
			t.Errorf("Glob(%s) = %v, want ErrOutside", pattern, err)
		}
	}
}

func TestSplitGlob(t *testing.T) {
	for _, tc := range []struct{ in, prefix, rest string }{
		{"/a/b/c-*", "/a/b", "c-*"},
		{"/a/*/c", "/a", "*/c"},
		{"/*", "/", "*"},
		{"/a/b", "/a/b", ""},
		{`/a/b\*`, "/a", `b\*`},
	} {
		p, r := splitGlob(tc.in)
		if p != tc.prefix || r != tc.rest {
			t.Errorf("splitGlob(%s) = %q, %q; want %q, %q", tc.in, p, r, tc.prefix, tc.rest)
		}
	}
}
