package confine

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// bothWays runs f with openat2 and with the walk by hand.
func bothWays(t *testing.T, f func(t *testing.T)) {
	for _, walked := range []bool{false, true} {
		name := map[bool]string{false: "openat2", true: "walk"}[walked]
		t.Run(name, func(t *testing.T) {
			noOpenat2.Store(walked)
			t.Cleanup(func() { noOpenat2.Store(false) })
			f(t)
		})
	}
}

func TestOpenFollowsLinksUnderRoots(t *testing.T) {
	bothWays(t, func(t *testing.T) {
		root, _, r := fixture(t)
		mustSymlink(t, "data/train-0", filepath.Join(root, "rel"))
		for _, p := range []string{
			filepath.Join(root, "data", "train-0"),
			filepath.Join(root, "in", "train-0"), // absolute symlink to a place under the root
			filepath.Join(root, "rel"),           // relative symlink
			root + "/data/../data/train-0",
		} {
			b, err := r.ReadFile(p)
			if err != nil || string(b) != "x" {
				t.Errorf("ReadFile(%s) = %q, %v; want x", p, b, err)
			}
		}
	})
}

func TestOpenRefusesEscapes(t *testing.T) {
	bothWays(t, func(t *testing.T) {
		root, outside, r := fixture(t)
		mustSymlink(t, "../outside/train-9", filepath.Join(root, "relout"))
		for _, p := range []string{
			filepath.Join(root, "data", "train-9"), // absolute symlink out
			filepath.Join(root, "out", "train-9"),  // through a symlinked directory
			filepath.Join(root, "relout"),          // relative symlink out
			root + "/../outside/train-9",           // ".."
			filepath.Join(outside, "train-9"),      // under no root
			filepath.Join(root, "dangling"),        // leads out, to nothing
		} {
			_, err := r.Open(p)
			if !errors.Is(err, ErrOutside) {
				t.Errorf("Open(%s) = %v, want ErrOutside", p, err)
				continue
			}
			if !strings.Contains(err.Error(), filepath.Clean(p)) || !strings.Contains(err.Error(), root) {
				t.Errorf("Open(%s): %q does not name the path and the root %s", p, err, root)
			}
		}
		if _, err := r.Open(filepath.Join(root, "data", "nope")); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("Open of a missing file = %v, want ErrNotExist", err)
		}
	})
}

// TestOpenAfterSwap: a path checked while it was a directory under the root,
// then replaced by a symlink out of it (what a user does between submit and
// the role's open), is refused where it is opened; so is a root that was
// itself replaced by a symlink.
func TestOpenAfterSwap(t *testing.T) {
	bothWays(t, func(t *testing.T) {
		root, outside, r := fixture(t)
		ckpt := filepath.Join(root, "ckpt")
		r = r.With(ckpt)
		if err := r.MkdirAll(ckpt, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := r.Check(ckpt); err != nil {
			t.Fatalf("Check before the swap: %v", err)
		}
		if err := os.Remove(ckpt); err != nil {
			t.Fatal(err)
		}
		mustSymlink(t, outside, ckpt)
		if _, err := r.OpenFile(filepath.Join(ckpt, "pwn"), os.O_WRONLY|os.O_CREATE, 0o600); !errors.Is(err, ErrOutside) {
			t.Errorf("create under a swapped root = %v, want ErrOutside", err)
		}
		if err := r.MkdirAll(filepath.Join(ckpt, "sub"), 0o700); !errors.Is(err, ErrOutside) {
			t.Errorf("MkdirAll under a swapped root = %v, want ErrOutside", err)
		}
		if _, err := os.Lstat(filepath.Join(outside, "pwn")); err == nil {
			t.Error("a file was created outside the roots")
		}
		if _, err := os.Lstat(filepath.Join(outside, "sub")); err == nil {
			t.Error("a directory was created outside the roots")
		}
		if err := r.Remove(filepath.Join(ckpt, "train-9")); !errors.Is(err, ErrOutside) {
			t.Errorf("Remove under a swapped root = %v, want ErrOutside", err)
		}
		if _, err := os.Lstat(filepath.Join(outside, "train-9")); err != nil {
			t.Errorf("a file outside the roots was removed: %v", err)
		}
	})
}

func TestMkdirAll(t *testing.T) {
	bothWays(t, func(t *testing.T) {
		root, outside, r := fixture(t)
		// A root that does not exist yet (a job's checkpoint.dir) is created.
		ckpt := filepath.Join(root, "new", "ckpt")
		r = r.With(ckpt)
		for _, p := range []string{filepath.Join(ckpt, "a", "b"), filepath.Join(root, "in", "m", "n")} {
			if err := r.MkdirAll(p, 0o700); err != nil {
				t.Fatalf("MkdirAll(%s): %v", p, err)
			}
		}
		if fi, err := os.Stat(filepath.Join(root, "data", "m", "n")); err != nil || !fi.IsDir() {
			t.Errorf("MkdirAll through a symlink under the root: %v", err)
		}
		// A root whose parent no root holds (a checkpoint.dir beside the
		// data) is created, its missing parents too.
		alone := filepath.Join(filepath.Dir(root), "job", "ckpt")
		if err := r.With(alone).MkdirAll(filepath.Join(alone, "marker"), 0o700); err != nil {
			t.Errorf("MkdirAll under a root still to be created: %v", err)
		}
		if err := r.MkdirAll(filepath.Join(filepath.Dir(root), "job", "other"), 0o700); !errors.Is(err, ErrOutside) {
			t.Errorf("MkdirAll beside a root = %v, want ErrOutside", err)
		}
		if err := r.MkdirAll(filepath.Join(root, "out", "x"), 0o700); !errors.Is(err, ErrOutside) {
			t.Errorf("MkdirAll through a symlink out = %v, want ErrOutside", err)
		}
		if _, err := os.Lstat(filepath.Join(outside, "x")); err == nil {
			t.Error("MkdirAll created a directory outside the roots")
		}
	})
}

func TestMatches(t *testing.T) {
	bothWays(t, func(t *testing.T) {
		root, _, r := fixture(t)
		got, err := r.Matches(filepath.Join(root, "data", "train-0*"))
		if err != nil || len(got) != 1 {
			t.Errorf("Matches(train-0*) = %v, %v; want one match", got, err)
		}
		_, err = r.Matches(filepath.Join(root, "data", "train-*"))
		if !errors.Is(err, ErrOutside) || !strings.Contains(err.Error(), filepath.Join(root, "data", "train-9")) {
			t.Errorf("Matches over a symlink out = %v, want ErrOutside naming train-9", err)
		}
	})
}

// TestResolveMissingParts: a ".." after a part that does not exist yet is
// refused, and one after a symlink goes where the kernel would go.
func TestResolveMissingParts(t *testing.T) {
	root, outside, r := fixture(t)
	if _, err := r.Path(root + "/new/../x"); !errors.Is(err, ErrUnresolvable) || !strings.Contains(err.Error(), root+"/new") {
		t.Errorf("Path(new/../x) = %v, want ErrUnresolvable naming the missing part", err)
	}
	// out -> outside: out/.. is outside's parent, not the root.
	if _, err := r.Path(root + "/out/../x"); !errors.Is(err, ErrOutside) {
		t.Errorf("Path(out/../x) = %v, want ErrOutside", err)
	}
	if got, err := r.Path(root + "/in/../x"); err != nil || got != filepath.Join(root, "x") {
		t.Errorf("Path(in/../x) = %q, %v; want %s", got, err, filepath.Join(root, "x"))
	}
	_ = outside
}

// TestBeneath holds the layer under Roots to RESOLVE_BENEATH's contract,
// with openat2 and with the walk: whatever Roots resolved by hand before, a
// path opened relative to a root's fd cannot leave it (EXDEV), through
// "..", a relative symlink out, or any absolute symlink.
func TestBeneath(t *testing.T) {
	bothWays(t, func(t *testing.T) {
		root, _, _ := fixture(t)
		mustSymlink(t, "data/train-0", filepath.Join(root, "rel"))
		mustSymlink(t, "../outside/train-9", filepath.Join(root, "relout"))
		mustSymlink(t, "loop", filepath.Join(root, "loop"))
		rootfd, err := unix.Open(root, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer unix.Close(rootfd)
		for _, ok := range []string{"rel", "data/train-0", "data/../rel", "./data//train-0"} {
			fd, err := beneath(rootfd, ok, unix.O_RDONLY, 0, false)
			if err != nil {
				t.Errorf("beneath(%s): %v", ok, err)
				continue
			}
			unix.Close(fd)
		}
		for _, bad := range []string{"relout", "../outside/train-9", "data/../../outside/train-9", "in/train-0", "data/train-9", "out"} {
			if fd, err := beneath(rootfd, bad, unix.O_RDONLY, 0, false); err != unix.EXDEV {
				unix.Close(fd)
				t.Errorf("beneath(%s) = %v, want EXDEV", bad, err)
			}
		}
		if _, err := beneath(rootfd, "loop", unix.O_RDONLY, 0, false); err != unix.ELOOP {
			t.Errorf("beneath(loop) = %v, want ELOOP", err)
		}
		if _, err := beneath(rootfd, "rel", unix.O_RDONLY, 0, true); err != unix.ELOOP {
			t.Errorf("beneath(rel) with no symlinks = %v, want ELOOP", err)
		}
		fd, err := beneath(rootfd, "data/new", unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL, 0o600, false)
		if err != nil {
			t.Errorf("create beneath: %v", err)
		} else {
			unix.Close(fd)
		}
	})
}
