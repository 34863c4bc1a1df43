package e2e

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gtrain/gtrain/internal/testing/e2erig"
	"github.com/gtrain/gtrain/jobspec"
)

// TestProcessConfinedPaths (issue 10): through gctl and a real agent, a spec
// naming /etc, a ../../ escape or a symlink out of its directory is refused
// at submit with exit 2, naming the path and the allowed roots, and nothing
// is created; a spec over oversized counts is exit 2 too. A valid job run
// from the spec's directory leaves only files other users cannot read.
func TestProcessConfinedPaths(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real processes")
	}
	work := t.TempDir()
	a := e2erig.StartAgent(t, filepath.Join(work, "agent"))
	job := filepath.Join(work, "job")
	e2erig.Housing(t, filepath.Join(job, "data"))
	outside := t.TempDir()
	if err := os.Symlink(outside, filepath.Join(job, "out")); err != nil {
		t.Fatal(err)
	}
	escape := filepath.Join(filepath.Dir(work), "gtrain-escape-"+filepath.Base(work))
	for _, c := range []struct{ name, ckptDir, want string }{
		{"/etc", "/etc/gtrain-pwn", "/etc/gtrain-pwn"},
		{"../../x", "../../" + filepath.Base(escape), escape},
		{"symlink out", "out/ckpt", "out/ckpt"},
		{"oversized count", "", "trainers"},
	} {
		t.Run(c.name, func(t *testing.T) {
			spec := fitALineJob("confined", jobspec.ModeSync, 1, "data")
			spec.Checkpoint.Dir = c.ckptDir
			if c.name == "oversized count" {
				spec.Trainers = 100000
			}
			file := e2erig.WriteSpec(t, job, spec)
			_, errs, code := a.Gctl(t, "job", "start", "-f", file)
			if code != 2 || !strings.Contains(errs, c.want) {
				t.Errorf("exit %d, want 2 naming %q: %s", code, c.want, errs)
			}
			if c.name != "oversized count" && (!strings.Contains(errs, a.DataDir) || !strings.Contains(errs, job)) {
				t.Errorf("the message does not name the allowed roots %s and %s: %s", a.DataDir, job, errs)
			}
		})
	}
	for _, p := range []string{"/etc/gtrain-pwn", escape, filepath.Join(outside, "ckpt")} {
		if _, err := os.Lstat(p); !os.IsNotExist(err) {
			t.Errorf("%s exists after the rejected submits (%v)", p, err)
		}
	}
	if out, _, _ := a.Gctl(t, "job", "list"); strings.Contains(out, "confined") {
		t.Errorf("a rejected job is listed:\n%s", out)
	}

	spec := fitALineJob("confined", jobspec.ModeSync, 1, "data")
	spec.Checkpoint = jobspec.CheckpointSpec{Every: "5", Dir: "ckpt"}
	if _, errs, code := a.Gctl(t, "job", "start", "-f", e2erig.WriteSpec(t, job, spec)); code != 0 {
		t.Fatalf("a job under its spec's directory: exit %d: %s", code, errs)
	}
	assertPrivate(t, filepath.Join(a.DataDir, "jobs"))
	assertPrivate(t, filepath.Join(job, "ckpt"))
}

// assertPrivate fails for any file or directory under root (root included)
// that users other than the owner can read, write or enter.
func assertPrivate(t *testing.T, root string) {
	t.Helper()
	n := 0
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := os.Lstat(p)
		if err != nil || info.Mode()&fs.ModeSymlink != 0 {
			return err // a symlink's own mode means nothing
		}
		n++
		if perm := info.Mode().Perm(); perm&0o077 != 0 {
			t.Errorf("%s has mode %v: other users can reach it", p, perm)
		}
		return nil
	})
	if err != nil || n < 3 {
		t.Errorf("walking %s: %v (%d entries)", root, err, n)
	}
}
