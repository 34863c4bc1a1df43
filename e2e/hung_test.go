package e2e

import (
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gtrain/gtrain/api"
	"github.com/gtrain/gtrain/internal/testing/e2erig"
)

// hungAfter is the job's restarts.hung_after in TestChaosHungWorkers: short,
// so that the test stays short.
const hungAfter = 5 * time.Second

// No straggler re-handing: the stopped trainer's micro-batches then wait
// for it, the stall hung_after is for (with it, the job routes around the
// trainer and may finish before hung_after; e2e/elastic_test.go covers that).
// The job stands still while a victim is stopped, so what it must outlast
// is the steps it takes between the test's looks (a look sees the step
// with a lag of up to a status save, 250 ms, and a poll): the second
// victim was stopped near step 400 on a loaded machine, and on an idle one
// (600 steps a second) three looks' lag could take it to about 800.
// hungPasses, 2,720 steps (about 5 s uninterrupted), leaves three times
// that; 200 passes made both of the test's runs 2.5 times longer.
const hungPasses = 80

// TestChaosHungWorkers: a trainer, then a pserver, of a sync job is
// SIGSTOPped (for 60 s: alive, not progressing). Within hung_after and a few
// seconds the master declares it hung (an event naming it) and its agent
// kills it (an event); it is restarted, counted against the crash budget,
// and training goes on. The job SUCCEEDS, every record applied once, the
// model that of an uninterrupted run, bit for bit.
func TestChaosHungWorkers(t *testing.T) {
	if testing.Short() {
		t.Skip("chaos test: real processes, SIGSTOP")
	}
	a, _, refSt := e2erig.ReferenceSetup(t, hungJob)
	if n := countEventsContaining(refSt, "hung"); n != 0 {
		t.Errorf("the uninterrupted run has %d hung events, want none: %+v", n, refSt.Events)
	}
	e2erig.StartDetached(t, a, hungJob("hung"))
	st := e2erig.WaitJob(t, a, "hung", "training to start", 60*time.Second, func(st api.JobStatus) bool { return st.Step > 40 })
	for _, victim := range []string{"trainer-1", "pserver-0"} {
		st = stopUntilRestarted(t, a, victim, st.Step)
	}
	st = e2erig.WaitJob(t, a, "hung", "the job to finish", 180*time.Second, e2erig.Succeeded)
	e2erig.LogEvents(t, st)
	e2erig.AssertExactPasses(t, st, hungPasses)
	if sums, ref := e2erig.ManifestSums(t, st.ModelDir), e2erig.ManifestSums(t, refSt.ModelDir); sums != ref {
		t.Errorf("final model differs from the uninterrupted run:\n hung      %s\n reference %s", sums, ref)
	}
	for _, w := range append(e2erig.TrainersOf(st), e2erig.PserversOf(st)...) {
		want := 0
		if w.Name == "trainer-1" || w.Name == "pserver-0" {
			want = 1
		}
		if w.Restarts != want {
			t.Errorf("%s restarted %d times, want %d", w.Name, w.Restarts, want)
		}
	}
	if st.Trainers[1].BudgetUsed != 1 || st.Pservers[0].BudgetUsed != 1 {
		t.Errorf("budget used: trainer-1 %d, pserver-0 %d; want 1 each (a hang is the role's fault)",
			st.Trainers[1].BudgetUsed, st.Pservers[0].BudgetUsed)
	}
}

// stopUntilRestarted SIGSTOPs victim (and schedules its SIGCONT 60 s later,
// if it still lives), checks that it is declared hung and killed within
// hung_after and a few seconds, and that training goes on without it.
func stopUntilRestarted(t *testing.T, a *e2erig.Agent, victim string, step int64) api.JobStatus {
	t.Helper()
	pid := a.PIDOf(t, "hung", victim)
	t.Logf("SIGSTOP %s (pid %d) at step %d", victim, pid, step)
	stopped := time.Now()
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	cont := time.AfterFunc(60*time.Second, func() { _ = syscall.Kill(pid, syscall.SIGCONT) })
	t.Cleanup(func() { cont.Stop() })
	for e2erig.ProcessAlive(pid) && time.Since(stopped) < hungAfter+20*time.Second {
		time.Sleep(100 * time.Millisecond)
	}
	if e2erig.ProcessAlive(pid) {
		t.Fatalf("%s (pid %d) still alive %s after SIGSTOP; hung_after is %s", victim, pid, time.Since(stopped), hungAfter)
	}
	t.Logf("%s gone %s after SIGSTOP", victim, time.Since(stopped).Round(100*time.Millisecond))
	st := e2erig.JobStatus(t, a, "hung")
	declared := firstEvent(st, victim+" has not ")
	killed := firstEvent(st, victim+" hung for ")
	if declared == nil || killed == nil {
		t.Fatalf("want a hung event from the master and a kill event from the agent for %s; events: %+v", victim, st.Events)
	}
	if d := killed.Time.Sub(stopped); d < hungAfter-time.Second || d > hungAfter+10*time.Second {
		t.Errorf("%s killed %s after SIGSTOP, want within hung_after %s + 10 s (and not before it)", victim, d, hungAfter)
	}
	return e2erig.WaitJob(t, a, "hung", "progress after "+victim+" restarted", 90*time.Second, func(st api.JobStatus) bool {
		return st.State == api.StateSucceeded || st.Step >= step+60
	})
}

func firstEvent(st api.JobStatus, prefix string) *api.Event {
	for i, e := range st.Events {
		if strings.HasPrefix(e.What, prefix) {
			return &st.Events[i]
		}
	}
	return nil
}

func countEventsContaining(st api.JobStatus, s string) int {
	n := 0
	for _, e := range st.Events {
		if strings.Contains(e.What, s) {
			n++
		}
	}
	return n
}
