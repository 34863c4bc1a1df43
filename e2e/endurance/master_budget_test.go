package endurance

import (
	"math/rand/v2"
	"syscall"
	"testing"
	"time"

	"github.com/gtrain/gtrain/internal/testing/e2erig"
	"github.com/gtrain/gtrain/jobspec"

	"github.com/gtrain/gtrain/api"
)

// budgetPasses makes the chaos job long enough for twenty master deaths:
// 5,100 steps, about 10 s uninterrupted. The deaths take the job through
// about 2,400 steps (eight or twenty, seen on 2 cores: a successor leads,
// makes a few steps, dies at a random moment up to 1 s later); 40 passes
// (1,360 steps) ended before them once a step took 1.7 ms.
const budgetPasses = 150

// budgetSpec is the chaos job made long enough for the master deaths,
// with the default crash budget (5 per 60 s).
func budgetSpec(name string) jobspec.Spec { return e2erig.ChaosJob(name, budgetPasses) }

// TestChaosMasterKilledEightTimes: the master of a sync job dies eight
// times at random moments: four SIGKILLs (an operator or the OOM killer:
// each counts against the crash budget) and four SIGSTOPs longer than its
// lease, then SIGCONT (it finds its authority lapsed and exits without
// acting; that does not count). The job SUCCEEDS inside its budget, every
// record applied once, the model that of an uninterrupted run; status
// shows the master's eight restarts and the budget it used.
func TestChaosMasterKilledEightTimes(t *testing.T) {
	t.Parallel()
	trainsAllAlong(t)
	if testing.Short() {
		t.Skip("chaos test: real processes, SIGKILL, SIGSTOP")
	}
	a, _, refSt := e2erig.ReferenceSetup(t, budgetSpec)
	ref := e2erig.ManifestSums(t, refSt.ModelDir)
	e2erig.StartDetached(t, a, budgetSpec("budget"))
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 8))
	for i := range 8 {
		stopInstead := i%2 == 1
		killMasterAtRandom(t, a, "budget", stopInstead, rng)
	}
	st := e2erig.WaitJob(t, a, "budget", "the job to finish", 180*time.Second, e2erig.Succeeded)
	e2erig.LogEvents(t, st)
	e2erig.AssertExactPasses(t, st, budgetPasses)
	if sums := e2erig.ManifestSums(t, st.ModelDir); sums != ref {
		t.Errorf("final model differs from the uninterrupted run:\n chaos     %s\n reference %s", sums, ref)
	}
	if st.Master.Restarts != 8 || st.Master.BudgetUsed > 4 || st.RestartBudget.Limit != 5 {
		t.Errorf("master: %d restarts, %d of the budget %+v used; want 8 restarts, at most the 4 SIGKILLs counted",
			st.Master.Restarts, st.Master.BudgetUsed, st.RestartBudget)
	}
	if n := e2erig.CountEvents(st, "master lost etcd or its master"); n != 4 {
		t.Errorf("%d events of the master exiting uncounted, want 4 (one per SIGSTOP)", n)
	}
}

// killMasterAtRandom waits until the job's master leads and the job made
// progress under it, waits a random moment more, then SIGKILLs the master,
// or SIGSTOPs it for longer than its lease (5 s) and SIGCONTs it.
func killMasterAtRandom(t *testing.T, a *e2erig.Agent, job string, stopInstead bool, rng *rand.Rand) {
	t.Helper()
	st := e2erig.WaitJob(t, a, job, "a master leading", 60*time.Second, func(st api.JobStatus) bool {
		return st.Master.PID > 0 && st.Step > 0
	})
	st = e2erig.WaitJob(t, a, job, "progress under the master", 60*time.Second, e2erig.ProgressedFrom(st.Step+5))
	time.Sleep(time.Duration(rng.Int64N(int64(time.Second))))
	pid := a.PIDOf(t, job, "master")
	if !stopInstead {
		t.Logf("SIGKILL the master (pid %d) near step %d", pid, st.Step)
		_ = syscall.Kill(pid, syscall.SIGKILL)
		return
	}
	t.Logf("SIGSTOP the master (pid %d) near step %d for 7 s", pid, st.Step)
	e2erig.StopPastLease(t, "the master", pid, 7*time.Second, 30*time.Second)
}

// TestChaosMasterFailoverTwentyTimes: the master is SIGKILLed twenty times
// at random moments, so that some die with a trainer's step report in
// flight while another trainer is already ahead. Every successor resumes
// the job (no livelock on "step out of order"); it SUCCEEDS with every
// record applied once and the uninterrupted run's model.
func TestChaosMasterFailoverTwentyTimes(t *testing.T) {
	t.Parallel()
	trainsAllAlong(t)
	if testing.Short() {
		t.Skip("chaos test: real processes, SIGKILL")
	}
	failoverSpec := func(name string) jobspec.Spec {
		s := budgetSpec(name)
		s.Restarts = jobspec.RestartsSpec{Limit: 25, Window: "10m"}
		return s
	}
	a, _, refSt := e2erig.ReferenceSetup(t, failoverSpec)
	ref := e2erig.ManifestSums(t, refSt.ModelDir)
	e2erig.StartDetached(t, a, failoverSpec("failover"))
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 20))
	var step int64
	var pid int
	for range 20 {
		// A successor must get a step done before it dies in turn: killing
		// masters faster than they start proves nothing about the protocol.
		st := e2erig.WaitJob(t, a, "failover", "a new master's first step", 60*time.Second, func(st api.JobStatus) bool {
			return st.State == api.StateSucceeded || st.Step > step && st.Master.PID > 0 && st.Master.PID != pid
		})
		if st.State == api.StateSucceeded {
			t.Fatalf("the job finished before the 20 failovers; make it longer")
		}
		step, pid = st.Step, st.Master.PID
		time.Sleep(time.Duration(rng.Int64N(int64(700 * time.Millisecond))))
		t.Logf("SIGKILL the master (pid %d) near step %d", pid, st.Step)
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	st := e2erig.WaitJob(t, a, "failover", "the job to finish", 180*time.Second, e2erig.Succeeded)
	e2erig.AssertExactPasses(t, st, budgetPasses)
	if sums := e2erig.ManifestSums(t, st.ModelDir); sums != ref {
		t.Errorf("final model differs from the uninterrupted run:\n chaos     %s\n reference %s", sums, ref)
	}
	if st.Master.Restarts != 20 {
		t.Errorf("master restarted %d times, want 20", st.Master.Restarts)
	}
}
