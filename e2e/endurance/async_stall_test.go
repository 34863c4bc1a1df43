package endurance

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gtrain/gtrain/internal/testing/e2erig"
	"github.com/gtrain/gtrain/internal/testing/wait"

	"github.com/gtrain/gtrain/api"
)

// resumeMargin is how many passes must be left at SIGCONT for the resumed
// trainer to find its lease gone and be restarted before the job ends.
const resumeMargin = 20

// asyncStall is longer than the master's task timeout (30 s, not
// configurable in the job spec), so a deadline-only master would have
// timed out the stalled trainer's task, and longer than the trainer's
// lease (5 s), which is what takes the task back here.
const asyncStall = 35 * time.Second

// trainerLease is a trainer's registration lease.
const trainerLease = 5 * time.Second

// TestAsyncTrainerStalledPastTheTaskTimeout: an async job where trainer-1 is
// SIGSTOPped for longer than the task timeout while it holds a task, then
// SIGCONTed. The job succeeds, no task is ever marked failed, and, as the
// README documents for a stall past the lease, every pass counts each
// record exactly once: the stalled trainer's task ran again elsewhere, and
// the trainer, resumed, neither reports it nor pushes more of it.
func TestAsyncTrainerStalledPastTheTaskTimeout(t *testing.T) {
	if testing.Short() {
		t.Skip("e2e: real processes, SIGSTOP")
	}
	t.Parallel()
	trainsAllAlong(t)
	work := t.TempDir()
	res := e2erig.Housing(t, filepath.Join(work, "data"))
	a := e2erig.StartAgent(t, filepath.Join(work, "agent"))
	passes := asyncStallPasses(t, a, work)
	if _, errs, code := a.Gctl(t, "job", "start", "-f", e2erig.WriteSpec(t, work, e2erig.AsyncJob("stall", passes)), "--detach"); code != 0 {
		t.Fatalf("job start: exit %d: %s", code, errs)
	}
	// trainer-1 must hold tasks when it stops, not still be registering:
	// a pass now takes ~35 ms, and one trainer finished one alone while the
	// other's first registration retried.
	log := filepath.Join(a.DataDir, "jobs", "stall", "log", "trainer-1.log")
	wait.Eventually(t, 60*time.Second, "trainer-1 to register", func() (bool, string) {
		b, _ := os.ReadFile(log)
		return strings.Contains(string(b), "msg=registered"), "no msg=registered in " + log
	})
	st := e2erig.WaitJob(t, a, "stall", "training to start", 60*time.Second, func(st api.JobStatus) bool {
		return st.State == api.StateRunning && st.Pass >= 1
	})
	pid := a.PIDOf(t, "stall", "trainer-1")
	stoppedAt := st.Pass
	t.Logf("SIGSTOP trainer-1 (pid %d) at pass %d for %s", pid, st.Pass, asyncStall)
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGCONT) })
	for end := time.Now().Add(asyncStall); time.Now().Before(end); time.Sleep(time.Second) {
		if st = e2erig.JobStatus(t, a, "stall"); st.Tasks.Failed != 0 {
			t.Fatalf("a task failed while trainer-1 was stopped: %+v", st.Tasks)
		}
	}
	t.Logf("SIGCONT trainer-1 at pass %d of %d, job %s", st.Pass, passes, st.State)
	if st.State != api.StateRunning || st.Pass >= passes-resumeMargin {
		t.Fatalf("the job was at pass %d of %d (%s) when the stall ended: the calibrated length was too short to see the resumed trainer restart", st.Pass, passes, st.State)
	}
	if err := syscall.Kill(pid, syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	st = e2erig.WaitJob(t, a, "stall", "the job to succeed", finishWithin(stoppedAt, st.Pass, passes), func(st api.JobStatus) bool {
		return st.State == api.StateSucceeded
	})
	// Its lease gone, the resumed trainer stopped without reporting and
	// was restarted as one that lost contact, not as a crash.
	for _, w := range st.Trainers {
		if w.Name == "trainer-1" && (w.Restarts != 1 || w.BudgetUsed != 0) {
			t.Errorf("trainer-1 after its stall: %+v, want one restart, none counted", w)
		}
	}
	e2erig.AssertEachRecordOnce(t, st, passes, res.TrainRecords)
}

// asyncStallPasses makes the stalled job outlast the stall, whatever the
// machine's pace, without making it long: a one-trainer run of the same job
// (the pace while trainer-1 is stopped) times its passes, and the job gets
// twice the passes its fastest pass would make in the stall past
// trainer-1's lease (until the lease ends, its task holds the pass), plus
// two resume margins. Passes go from 2.5 to 30 a second on 2 cores, with
// the build and the load: a fixed count ended before the stall did once
// the step path sped up, and the median pass of a calibration under load
// (with another e2e package beside it) was once 1.8 times slower than
// the stall's passes after the load dropped.
func asyncStallPasses(t *testing.T, a *e2erig.Agent, work string) int {
	t.Helper()
	spec := e2erig.AsyncJob("pace", 30)
	spec.Trainers = 1
	if _, errs, code := a.Gctl(t, "job", "start", "-f", e2erig.WriteSpec(t, work, spec)); code != 0 {
		t.Fatalf("pace run: exit %d: %s", code, errs)
	}
	perPass := e2erig.FastestPassSeconds(e2erig.JobStatus(t, a, "pace"))
	// Twice the passes the stall would take at the fastest pace seen: a
	// machine under load calibrates slow and may then run faster; the
	// passes after the stall go at two trainers' pace, so the margin costs
	// seconds.
	passes := int(2*(asyncStall-trainerLease).Seconds()/perPass) + 2*resumeMargin
	t.Logf("one trainer makes a pass in %.0f ms at best: %d passes", perPass*1000, passes)
	return passes
}

// finishWithin is how long the job gets to end after the stall: 120 s, or
// more on a machine that ran the stall's passes slower, twice what the
// passes left take at the stall's pace (one trainer after its lease ended;
// two train after the resume). The calibration takes the fastest pass, so
// a machine that slows down afterwards (CI once ran this test beside
// the master's million-task test: 76 ms a pass calibrated, 300-450 ms
// after the stall) has many passes left.
func finishWithin(stoppedAt, resumedAt, passes int) time.Duration {
	done := max(resumedAt-stoppedAt, 1)
	perPass := (asyncStall - trainerLease).Seconds() / float64(done)
	return max(120*time.Second, time.Duration(2*perPass*float64(passes-resumedAt)*float64(time.Second)))
}
