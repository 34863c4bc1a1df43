package e2e

import (
	"syscall"
	"testing"
	"time"

	"github.com/gtrain/gtrain/internal/testing/e2erig"
)

// TestAsyncPserverKilled: an async job's pserver is SIGKILLed while the
// trainers push. Its agent restarts it from its own newest checkpoint and
// the job goes on: it succeeds, no task failed, every pass counts each
// record once (the shard's updates since the checkpoint are lost, as the
// README documents, not the accounting), and the pserver restarted once,
// counted against the crash budget.
func TestAsyncPserverKilled(t *testing.T) {
	if testing.Short() {
		t.Skip("e2e: real processes, SIGKILL")
	}
	const passes = 60
	a, res, st := startAsyncJob(t, "pkill", passes, 5)
	pid := a.PIDOf(t, "pkill", "pserver-0")
	t.Logf("SIGKILL pserver-0 (pid %d) at pass %d of %d", pid, st.Pass, passes)
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if st.Pass >= passes-10 {
		t.Fatalf("the job is about to end; make it longer")
	}
	st = e2erig.WaitJob(t, a, "pkill", "the job to succeed", 90*time.Second, e2erig.Succeeded)
	e2erig.LogEvents(t, st)
	e2erig.AssertEachRecordOnce(t, st, passes, res.TrainRecords)
	if ps := e2erig.PserversOf(st); len(ps) != 1 || ps[0].Restarts != 1 {
		t.Errorf("pservers after the kill: %+v, want pserver-0 restarted once", ps)
	}
}
