package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gtrain/gtrain/internal/testing/e2erig"
	"github.com/gtrain/gtrain/internal/testing/wait"
	"github.com/gtrain/gtrain/jobspec"

	"github.com/gtrain/gtrain/api"
	"github.com/gtrain/gtrain/checkpoint"
)

// chaosPasses is the chaos job's length: 850 steps, one to two seconds
// uninterrupted on 2 cores. A test whose faults need the job to run for
// longer takes more passes (e2erig.ChaosJob): the step path takes about
// 1.7 ms a step, so a test cannot count on a slow job to leave it time.
const chaosPasses = 25

func chaosSpec(name string) jobspec.Spec { return e2erig.ChaosJob(name, chaosPasses) }

// chaosSetup starts an agent over the housing data and runs the chaos spec
// once uninterrupted: the reference the chaos runs must match.
func chaosSetup(t *testing.T) (a *e2erig.Agent, work string, ref api.JobStatus) {
	t.Helper()
	return e2erig.ReferenceSetup(t, chaosSpec)
}

// TestChaosSIGKILLEveryRole: fit-a-line in sync mode with 2 pservers and 3
// trainers; during training SIGKILL, in turn, a trainer, a pserver, the master
// and the agent (then start it again). The job must succeed, every pass must
// apply each training record exactly once, and the model must match an
// uninterrupted run with the same seed.
func TestChaosSIGKILLEveryRole(t *testing.T) {
	if testing.Short() {
		t.Skip("chaos test: real processes, SIGKILL")
	}
	a, _, refSt := chaosSetup(t)
	refSums := e2erig.ManifestSums(t, refSt.ModelDir)

	e2erig.StartDetached(t, a, chaosSpec("chaos"))
	st := killEveryWorkerRole(t, a)
	assertOnlyVictimsRestarted(t, st)

	a2 := killAndRestartAgent(t, a, st.Step)
	st = e2erig.WaitJob(t, a2, "chaos", "the job to finish after the agent restarted", 180*time.Second, func(st api.JobStatus) bool { return st.State == api.StateSucceeded })
	assertChaosRunMatches(t, st, refSt, refSums, "trainer-1", "pserver-0", "master")
}

// killEveryWorkerRole SIGKILLs, in turn, a trainer, a pserver and the master
// of the running chaos job, each after training progressed, and returns
// the status after the last one.
func killEveryWorkerRole(t *testing.T, a *e2erig.Agent) api.JobStatus {
	t.Helper()
	running := func(st api.JobStatus) bool { return st.State == api.StateRunning }
	progressed := func(from int64) func(api.JobStatus) bool {
		return func(st api.JobStatus) bool { return st.State == api.StateSucceeded || st.Step >= from+60 }
	}
	st := e2erig.WaitJob(t, a, "chaos", "training to start", 60*time.Second, func(st api.JobStatus) bool { return running(st) && st.Step > 40 })

	for _, victim := range []string{"trainer-1", "pserver-0", "master"} {
		pid := a.PIDOf(t, "chaos", victim)
		t.Logf("SIGKILL %s (pid %d) at step %d", victim, pid, st.Step)
		if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		st = e2erig.WaitJob(t, a, "chaos", "progress after killing "+victim, 90*time.Second, progressed(st.Step))
		if st.State == api.StateSucceeded {
			t.Fatalf("training finished before the next kill; make the chaos job longer")
		}
	}
	return st
}

// assertOnlyVictimsRestarted: each kill restarted its victim and nothing
// else (a dead trainer must not take the master or its peers down with it).
func assertOnlyVictimsRestarted(t *testing.T, st api.JobStatus) {
	t.Helper()
	want := map[string]int{"trainer-0": 0, "trainer-1": 1, "trainer-2": 0, "pserver-0": 1, "pserver-1": 0, "master": 1}
	got := map[string]int{"master": st.Master.Restarts}
	for _, w := range append(e2erig.TrainersOf(st), e2erig.PserversOf(st)...) {
		got[w.Name] = w.Restarts
	}
	for name, n := range want {
		if got[name] != n {
			t.Errorf("%s restarted %d times, want %d (restarts: %v; events: %+v)", name, got[name], n, got, st.Events)
		}
	}
}

// killAndRestartAgent SIGKILLs the agent, checks that its children died
// with it, and starts it again.
func killAndRestartAgent(t *testing.T, a *e2erig.Agent, step int64) *e2erig.Agent {
	t.Helper()
	t.Logf("SIGKILL the agent (pid %d) at step %d", a.Cmd.Process.Pid, step)
	if err := a.Cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	<-a.Exited
	if err := wait.Until(10*time.Second, "the children of the SIGKILLed agent to die with it", func() (bool, string) {
		left := e2erig.ProcessesUsing(a.DataDir)
		return len(left) == 0, fmt.Sprintf("alive: %v", left)
	}); err != nil {
		t.Error(err)
	}
	return restartAgent(t, a)
}

// assertChaosRunMatches: every pass applied each training record exactly
// once, and the model is the uninterrupted run's, bit for bit.
func assertChaosRunMatches(t *testing.T, st, refSt api.JobStatus, refSums string, victims ...string) {
	t.Helper()
	for p, n := range st.SamplesApplied {
		if n != 404 {
			t.Errorf("pass %d: samples_applied %d, want 404 (exactly once)", p, n)
		}
	}
	if len(st.SamplesApplied) != 25 {
		t.Errorf("samples_applied covers %d passes, want 25", len(st.SamplesApplied))
	}
	if st.Metrics.TestLoss == nil || !within(*st.Metrics.TestLoss, *refSt.Metrics.TestLoss, 0.02) {
		t.Errorf("test MSE %v not within 2%% of the uninterrupted run's %v", st.Metrics.TestLoss, *refSt.Metrics.TestLoss)
	}
	sums := e2erig.ManifestSums(t, st.ModelDir)
	if sums != refSums {
		t.Errorf("final model differs from the uninterrupted run:\n chaos     %s\n reference %s", sums, refSums)
	}
	restarts := map[string]int{}
	for _, w := range append(e2erig.TrainersOf(st), e2erig.PserversOf(st)...) {
		restarts[w.Name] = w.Restarts
	}
	restarts["master"] = st.Master.Restarts
	t.Logf("restarts: %v; events:", restarts)
	for _, e := range st.Events {
		t.Logf("  %s  %s", e.Time.Format("15:04:05.000"), e.What)
	}
	for _, v := range victims {
		if restarts[v] < 1 {
			t.Errorf("status does not list the restart of %s: %v", v, restarts)
		}
	}
}

// TestChaosDamagedNewestCheckpointFallsBack: the newest global checkpoint of
// a pserver has a flipped byte when the pserver restarts; it must detect it,
// fall back to the previous complete global checkpoint and say so, and the
// job must still end with the uninterrupted run's model.
func TestChaosDamagedNewestCheckpointFallsBack(t *testing.T) {
	if testing.Short() {
		t.Skip("chaos test: real processes, SIGKILL")
	}
	a, _, refSt := chaosSetup(t)
	refSums := e2erig.ManifestSums(t, refSt.ModelDir)

	e2erig.StartDetached(t, a, chaosSpec("damaged"))
	cli, id, dir := jobCheckpoints(t, a, "damaged")
	// Freeze the pserver so no newer checkpoint completes, then damage the newest.
	pid, g := freezeAtGlobal(t, a, cli, "damaged", "pserver-0", 2)
	file := filepath.Join(dir, checkpoint.FileName(id, "pserver-0", g.Step))
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("newest global checkpoint step %d of pserver-0: %v", g.Step, err)
	}
	b[len(b)/2] ^= 0x40
	if err := os.WriteFile(file, b, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("flipped a byte of %s; SIGKILL pserver-0 (pid %d)", filepath.Base(file), pid)
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	st := e2erig.WaitJob(t, a, "damaged", "the job to finish", 120*time.Second, func(st api.JobStatus) bool { return st.State == api.StateSucceeded })
	fellBack := false
	for _, e := range st.Events {
		t.Logf("  %s", e.What)
		fellBack = fellBack || (strings.Contains(e.What, "fell back") && strings.Contains(e.What, fmt.Sprint(g.Step)))
	}
	if !fellBack {
		t.Errorf("no event says pserver-0 fell back from the damaged step %d", g.Step)
	}
	for p, n := range st.SamplesApplied {
		if n != 404 {
			t.Errorf("pass %d: samples_applied %d, want 404", p, n)
		}
	}
	if sums := e2erig.ManifestSums(t, st.ModelDir); sums != refSums {
		t.Errorf("final model differs from the uninterrupted run:\n %s\n %s", sums, refSums)
	}
}
