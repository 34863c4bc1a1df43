package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gtrain/gtrain/api"
	"github.com/gtrain/gtrain/checkpoint"
	"github.com/gtrain/gtrain/coord"
	"github.com/gtrain/gtrain/coord/schema"
	"github.com/gtrain/gtrain/internal/testing/e2erig"
	"github.com/gtrain/gtrain/jobspec"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// restorePasses leaves the job time to keep three global checkpoints
// before it ends, on a loaded machine too.
const restorePasses = 40

func restoreSpec(name string) jobspec.Spec { return e2erig.ChaosJob(name, restorePasses) }

// TestChaosAlteredCheckpointIsNotLoaded: checkpoint files altered on disk
// so that they still decode (their own checksum fits) but their sha256 is
// no longer the one etcd records are never loaded. pserver-0's newest
// global checkpoint and pserver-1's previous one are rewritten, then
// pserver-0 is SIGKILLed: it restarts from the previous global checkpoint
// (its own newest is altered), the master's rollback to that step finds
// pserver-1's file altered too, and the whole job falls back to the
// checkpoint before, with events that say why; it still ends with the
// uninterrupted run's model.
func TestChaosAlteredCheckpointIsNotLoaded(t *testing.T) {
	if testing.Short() {
		t.Skip("chaos test: real processes, SIGKILL")
	}
	a, _, refSt := e2erig.ReferenceSetup(t, restoreSpec)
	refSums := e2erig.ManifestSums(t, refSt.ModelDir)

	const job = "altered"
	e2erig.StartDetached(t, a, restoreSpec(job))
	cli, id, dir := jobCheckpoints(t, a, job)
	pid, g := freezeAtGlobal(t, a, cli, job, "pserver-0", 3)
	newest, previous, target := g.Steps[len(g.Steps)-1], g.Steps[len(g.Steps)-2], g.Steps[len(g.Steps)-3]
	alterCheckpoint(t, id, dir, 0, newest)
	alterCheckpoint(t, id, dir, 1, previous)
	t.Logf("altered pserver-0's step %d and pserver-1's step %d (kept %v); SIGKILL pserver-0 (pid %d)", newest, previous, g.Steps, pid)
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	st := e2erig.WaitJob(t, a, job, "the job to finish", 120*time.Second, e2erig.Succeeded)
	e2erig.LogEvents(t, st)
	assertEvent(t, st, "pserver-0 fell back", fmt.Sprintf("step %d unusable", newest), "its record says")
	assertEvent(t, st, fmt.Sprintf("global checkpoint step %d not restored", previous), "its record says", fmt.Sprintf("step %d", target))
	assertEvent(t, st, fmt.Sprintf("rolled back to global checkpoint step %d", target))
	if n := countEventsContaining(st, fmt.Sprintf("rolled back to global checkpoint step %d (", previous)) +
		countEventsContaining(st, fmt.Sprintf("rolled back to global checkpoint step %d (", newest)); n != 0 {
		t.Errorf("%d rollbacks completed to a step whose checkpoint was altered", n)
	}
	e2erig.AssertExactPasses(t, st, restorePasses)
	e2erig.AssertSameModel(t, st, refSums)
}

// alterCheckpoint rewrites pserver index's checkpoint of step with one
// parameter value changed, as a well-formed file: it decodes and its own
// checksum fits, only its sha256 is no longer the one etcd records. The
// new file is written elsewhere first (a Save prunes the directory it
// writes in, where the running pserver-1 writes too).
func alterCheckpoint(t *testing.T, id checkpoint.Identity, dir string, index int, step int64) {
	t.Helper()
	cfg := checkpoint.Config{Identity: id, Dir: dir, Keep: 100, Index: index}
	src, err := checkpoint.NewStore(cfg, checkpoint.NewMemRecorder(), nil)
	if err != nil {
		t.Fatal(err)
	}
	snap, err := src.LoadStep(context.Background(), step)
	if err != nil {
		t.Fatalf("reading pserver-%d's checkpoint of step %d: %v", index, step, err)
	}
	snap.Sections[0].Data[0] += 0.25
	cfg.Dir = t.TempDir()
	dst, err := checkpoint.NewStore(cfg, checkpoint.NewMemRecorder(), nil)
	if err != nil {
		t.Fatal(err)
	}
	rec, err := dst.Save(context.Background(), *snap)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(cfg.Dir, rec.File))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, rec.File), b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// jobCheckpoints dials the agent's etcd (closed when the test ends) and
// returns it with job's checkpoint identity and directory.
func jobCheckpoints(t *testing.T, a *e2erig.Agent, job string) (*clientv3.Client, checkpoint.Identity, string) {
	t.Helper()
	cli, err := coord.Dial(context.Background(), []string{"http://" + a.Etcd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cli.Close() })
	_, rev, err := coord.GetJobRecord(context.Background(), cli, job)
	if err != nil {
		t.Fatal(err)
	}
	return cli, checkpoint.Identity{Job: job, Rev: rev}, filepath.Join(a.DataDir, "jobs", job, "checkpoints")
}

// freezeAtGlobal waits for job to keep n global checkpoints, then SIGSTOPs
// worker so that no newer one completes, and returns its pid and the
// global checkpoint record once the checkpoints in flight settled.
func freezeAtGlobal(t *testing.T, a *e2erig.Agent, cli *clientv3.Client, job, worker string, n int) (int, schema.GlobalCheckpoint) {
	t.Helper()
	var g schema.GlobalCheckpoint
	e2erig.WaitJob(t, a, job, fmt.Sprintf("%d global checkpoints", n), 60*time.Second, func(api.JobStatus) bool {
		_, err := coord.GetJSON(context.Background(), cli, coord.GlobalCheckpointKey(job), &g)
		return err == nil && len(g.Steps) >= n
	})
	pid := a.PIDOf(t, job, worker)
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	// A global checkpoint whose marks were all in before the stop may still
	// be declared: read it once the job has stood still for a second (a
	// fixed pause was too short for a master slowed by a loaded machine).
	waitStill(t, a, job, "the job to stand still with "+worker+" stopped", time.Second, 30*time.Second)
	if _, err := coord.GetJSON(context.Background(), cli, coord.GlobalCheckpointKey(job), &g); err != nil {
		t.Fatal(err)
	}
	return pid, g
}

// assertEvent: one of the job's events says every one of parts.
func assertEvent(t *testing.T, st api.JobStatus, parts ...string) {
	t.Helper()
	for _, e := range st.Events {
		all := true
		for _, p := range parts {
			all = all && strings.Contains(e.What, p)
		}
		if all {
			return
		}
	}
	t.Errorf("no event says all of %q", parts)
}
