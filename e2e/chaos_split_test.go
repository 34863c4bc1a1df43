package e2e

import (
	"syscall"
	"testing"
	"time"

	"github.com/gtrain/gtrain/api"
	"github.com/gtrain/gtrain/internal/testing/e2erig"
)

// TestChaosPserversSplitAtMasterStart: pserver-1 is SIGSTOPped, so that
// pserver-0 applies a step pserver-1 has not; then the master and every
// trainer are SIGKILLed together and pserver-1 is continued. The new master
// finds the pservers at different steps: it lets the one behind catch up
// (the one ahead takes the step it applied as done) or, when they are too
// far apart, rolls the job back to the newest complete global checkpoint at
// or below them. Either way the job SUCCEEDS with every record applied once
// and the uninterrupted run's model.
func TestChaosPserversSplitAtMasterStart(t *testing.T) {
	if testing.Short() {
		t.Skip("chaos test: real processes, SIGKILL, SIGSTOP")
	}
	a, _, refSt := chaosSetup(t)
	refSums := e2erig.ManifestSums(t, refSt.ModelDir)
	e2erig.StartDetached(t, a, chaosSpec("split"))
	st := e2erig.WaitJob(t, a, "split", "training to progress", 60*time.Second, func(st api.JobStatus) bool { return st.Step > 60 })
	victims := []int{a.PIDOf(t, "split", "master")}
	for _, tr := range st.Trainers {
		victims = append(victims, a.PIDOf(t, "split", tr.Name))
	}
	stopped := a.PIDOf(t, "split", "pserver-1")
	_ = syscall.Kill(stopped, syscall.SIGSTOP)
	time.Sleep(time.Second) // shorter than the pserver's lease: it must come back as it was
	for _, pid := range victims {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	_ = syscall.Kill(stopped, syscall.SIGCONT)
	t.Logf("SIGSTOPped pserver-1 near step %d, SIGKILLed the master and trainers %v, SIGCONTed pserver-1", st.Step, victims)
	st = e2erig.WaitJob(t, a, "split", "the job to finish", 180*time.Second, e2erig.Succeeded)
	assertChaosRunMatches(t, st, refSt, refSums, "master", "trainer-0", "trainer-1", "trainer-2")
	t.Logf("%d rollbacks", countEventsContaining(st, "rolled back"))
}

// TestChaosPserverCutOffFromEtcd: a pserver is SIGSTOPped for longer than
// its lease, then SIGCONTed. It finds its authority lapsed and exits by
// itself (uncounted: exit 75) instead of serving on; its restart restores
// the newest global checkpoint and the job SUCCEEDS with every record
// applied once and the uninterrupted run's model.
func TestChaosPserverCutOffFromEtcd(t *testing.T) {
	if testing.Short() {
		t.Skip("chaos test: real processes, SIGSTOP")
	}
	a, _, refSt := chaosSetup(t)
	refSums := e2erig.ManifestSums(t, refSt.ModelDir)
	e2erig.StartDetached(t, a, chaosSpec("cutoff"))
	st := e2erig.WaitJob(t, a, "cutoff", "training to progress", 60*time.Second, func(st api.JobStatus) bool { return st.Step > 60 })
	pid := a.PIDOf(t, "cutoff", "pserver-0")
	t.Logf("SIGSTOP pserver-0 (pid %d) near step %d for 8 s, past its 5 s lease", pid, st.Step)
	e2erig.StopPastLease(t, "pserver-0", pid, 8*time.Second, 20*time.Second)
	st = e2erig.WaitJob(t, a, "cutoff", "the job to finish", 180*time.Second, e2erig.Succeeded)
	assertChaosRunMatches(t, st, refSt, refSums, "pserver-0")
	if st.Pservers[0].BudgetUsed != 0 {
		t.Errorf("pserver-0 used %d of the crash budget; an exit after losing its lease is not a crash", st.Pservers[0].BudgetUsed)
	}
}
