package e2e

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gtrain/gtrain/api"
	"github.com/gtrain/gtrain/internal/testing/e2erig"
	"github.com/gtrain/gtrain/jobspec"
)

// TestProcessConfinedPaths (issue 10): through gctl and a real agent, a spec
// naming /etc, a ../../ escape or a symlink out of its directory is refused
// at submit with exit 2, naming the path and the allowed roots, and nothing
// is created; a spec over oversized counts is exit 2 too. A valid job run
// from the spec's directory leaves only files other users cannot read.
func TestProcessConfinedPaths(t *testing.T) {
	a, job := pathsSetup(t)
	outside := t.TempDir()
	if err := os.Symlink(outside, filepath.Join(job, "out")); err != nil {
		t.Fatal(err)
	}
	work := filepath.Dir(job)
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

// TestProcessShardSymlinkedAfterSubmit (issue 19, item 7): paths are
// confined where the roles open them, not only at submit. A job passes the
// submit-time check, is stopped at its first global checkpoint, and one of
// its training shards is then replaced by a symlink to a file in a
// directory outside every allowed root; resumed, its master lists the shards
// again and refuses the symlink: the job fails with a reason naming the
// shard, nothing is read from outside, and the agent goes on serving.
func TestProcessShardSymlinkedAfterSubmit(t *testing.T) {
	a, job := pathsSetup(t)
	spec := fitALineJob("escape", jobspec.ModeSync, 200, "data")
	spec.Trainers, spec.Pservers = 1, 1
	spec.Checkpoint = jobspec.CheckpointSpec{Every: "5", Dir: "ckpt"}
	spec.Restarts = jobspec.RestartsSpec{Limit: 1, Window: "10m"}
	if _, errs, code := a.Gctl(t, "job", "start", "--detach", "-f", e2erig.WriteSpec(t, job, spec)); code != 0 {
		t.Fatalf("job start: exit %d: %s", code, errs)
	}
	e2erig.WaitJob(t, a, "escape", "a global checkpoint", 60*time.Second, func(st api.JobStatus) bool { return st.Step > 10 })
	if _, errs, code := a.Gctl(t, "job", "stop", "escape"); code != 0 {
		t.Fatalf("job stop: exit %d: %s", code, errs)
	}
	e2erig.WaitJob(t, a, "escape", "the job to stop", 30*time.Second, func(st api.JobStatus) bool { return st.State == api.StateStopped })

	shards, err := filepath.Glob(filepath.Join(job, "data", "housing-train-*"))
	if err != nil || len(shards) == 0 {
		t.Fatalf("no training shards: %v", err)
	}
	outside := filepath.Join(t.TempDir(), "secret")
	if err := os.Rename(shards[0], outside); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, shards[0]); err != nil {
		t.Fatal(err)
	}
	if _, errs, code := a.Gctl(t, "job", "resume", "escape"); code != 0 {
		t.Fatalf("job resume: exit %d: %s", code, errs)
	}
	st := e2erig.WaitJob(t, a, "escape", "the job to fail", 60*time.Second, func(st api.JobStatus) bool { return st.State == api.StateFailed })
	t.Logf("reason: %s", st.Reason)
	if !strings.Contains(st.Reason, shards[0]) || !strings.Contains(st.Reason, "outside the allowed paths") {
		t.Errorf("reason %q: want it to name %s as outside the allowed paths", st.Reason, shards[0])
	}
	if _, errs, code := a.Gctl(t, "node", "list"); code != 0 {
		t.Errorf("the agent after the job failed: node list exit %d: %s", code, errs)
	}
}

// pathsSetup starts an agent and writes the housing shards under job/data,
// job being the directory the test writes its specs in.
func pathsSetup(t *testing.T) (a *e2erig.Agent, job string) {
	if testing.Short() {
		t.Skip("starts real processes")
	}
	work := t.TempDir()
	a = e2erig.StartAgent(t, filepath.Join(work, "agent"))
	job = filepath.Join(work, "job")
	e2erig.Housing(t, filepath.Join(job, "data"))
	return a, job
}
