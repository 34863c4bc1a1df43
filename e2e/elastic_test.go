package e2e

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gtrain/gtrain/api"
	"github.com/gtrain/gtrain/internal/testing/e2erig"
	"github.com/gtrain/gtrain/jobspec"
)

// TestElasticSameModelAnyTrainerCount: the same sync job with 1 and with 3
// trainers (same global batch) ends with the same model, bit for bit, and
// applies every record once per pass.
func TestElasticSameModelAnyTrainerCount(t *testing.T) {
	if testing.Short() {
		t.Skip("real processes")
	}
	begin := time.Now()
	work := t.TempDir()
	e2erig.Housing(t, filepath.Join(work, "data"))
	a := e2erig.StartAgent(t, filepath.Join(work, "agent"))
	sums := map[int]string{}
	var samples []int64
	for _, n := range []int{1, 3} {
		name := fmt.Sprintf("elastic-%d", n)
		if _, errs, code := a.Gctl(t, "job", "start", "-f", e2erig.WriteSpec(t, work, elasticCountJob(name, n))); code != 0 {
			t.Fatalf("%s: exit %d: %s", name, code, errs)
		}
		st := e2erig.JobStatus(t, a, name)
		if len(st.Trainers) != n {
			t.Fatalf("%s ran %d trainers, want %d", name, len(st.Trainers), n)
		}
		if samples == nil {
			samples = st.SamplesApplied
		}
		if len(st.SamplesApplied) != 3 || !slices.Equal(st.SamplesApplied, samples) || samples[0] != samples[2] {
			t.Fatalf("%s: samples applied %v, want 3 equal passes as %v", name, st.SamplesApplied, samples)
		}
		sums[n] = e2erig.ManifestSums(t, st.ModelDir)
	}
	if sums[1] != sums[3] {
		t.Fatalf("the model depends on the trainer count:\n1 trainer:  %s\n3 trainers: %s", sums[1], sums[3])
	}
	t.Logf("took %s", time.Since(begin).Round(time.Millisecond))
}

// scaleSpec is fit-a-line in sync mode, 4 micro-batches of 10 records per
// step, 2 trainers and 2 pservers, 30 passes.
func scaleSpec(name string) jobspec.Spec { return elasticJob(name, 2, 2, 30) }

// TestElasticScaleWhileTraining: a sync job starts with 1 trainer and is
// scaled to 4, 2 and 3 while it trains, each change seen in the running
// trainers and in steps taken after it; right after the scale to 4 a new
// trainer is SIGKILLed as it computes its first micro-batches. It succeeds,
// applies every record once per pass, keeps its survivors running without
// a restart, and ends with the model of a run with a fixed trainer count.
func TestElasticScaleWhileTraining(t *testing.T) {
	if testing.Short() {
		t.Skip("real processes")
	}
	begin := time.Now()
	a, _, ref := e2erig.ReferenceSetup(t, scaleSpec)
	refSums := e2erig.ManifestSums(t, ref.ModelDir)
	spec := scaleSpec("scaled")
	spec.Trainers, spec.TrainersMin, spec.TrainersMax = 1, 1, 4
	e2erig.StartDetached(t, a, spec)
	st := e2erig.WaitJob(t, a, "scaled", "training", 30*time.Second, func(st api.JobStatus) bool { return st.Step >= 5 })
	if st.TrainersCount != 1 || st.TrainersMin != 1 || st.TrainersMax != 4 {
		t.Fatalf("counts %d [%d, %d], want 1 [1, 4]", st.TrainersCount, st.TrainersMin, st.TrainersMax)
	}
	for _, n := range []int{4, 2, 3} {
		if out, errs, code := a.Gctl(t, "job", "scale", "scaled", "--trainers", fmt.Sprint(n)); code != 0 {
			t.Fatalf("scale to %d: exit %d: %s %s", n, code, out, errs)
		}
		if n == 4 {
			killNewTrainer(t, a, "scaled", 3)
		}
		at := e2erig.WaitJob(t, a, "scaled", fmt.Sprintf("%d trainers running", n), 30*time.Second, func(st api.JobStatus) bool {
			return st.TrainersCount == n && st.TrainersCurrent == n && len(st.Trainers) == n
		}).Step
		after := e2erig.WaitJob(t, a, "scaled", fmt.Sprintf("steps with %d trainers", n), 30*time.Second, func(st api.JobStatus) bool {
			return st.Step >= at+5 || st.State == api.StateSucceeded
		})
		if after.State == api.StateSucceeded {
			t.Fatalf("the job ended before 5 steps with %d trainers: make it longer", n)
		}
		t.Logf("%d trainers running at step %d", n, at)
	}
	straggle(t, a, "scaled", "trainer-0")
	st = e2erig.WaitJob(t, a, "scaled", "success", 90*time.Second, func(st api.JobStatus) bool { return st.State == api.StateSucceeded })
	if !slices.Equal(st.SamplesApplied, ref.SamplesApplied) {
		t.Fatalf("samples applied %v, want %v", st.SamplesApplied, ref.SamplesApplied)
	}
	for _, tr := range st.Trainers {
		if tr.Restarts != 0 {
			t.Fatalf("%s restarted %d times: survivors must not restart", tr.Name, tr.Restarts)
		}
	}
	scaled := 0
	for _, e := range st.Events {
		if strings.Contains(e.What, "trainers scaled from") {
			scaled++
		}
	}
	if scaled != 3 {
		t.Fatalf("%d scaling events, want 3: %+v", scaled, st.Events)
	}
	if sums := e2erig.ManifestSums(t, st.ModelDir); sums != refSums {
		t.Fatalf("the scaled run's model differs from the fixed run's:\nscaled: %s\nfixed:  %s", sums, refSums)
	}
	t.Logf("took %s", time.Since(begin).Round(time.Millisecond))
}

// straggle SIGSTOPs worker of job for up to 8 s: the others must take
// 10 steps meanwhile (its micro-batch is handed to another after the
// straggler deadline), and status must show the trainers' step times.
func straggle(t *testing.T, a *e2erig.Agent, job, worker string) {
	t.Helper()
	pid := a.PIDOf(t, job, worker)
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	cont := func() { _ = syscall.Kill(pid, syscall.SIGCONT) }
	t.Cleanup(cont)
	defer cont()
	time.Sleep(500 * time.Millisecond)
	from := e2erig.JobStatus(t, a, job).Step
	st := e2erig.WaitJob(t, a, job, worker+" stopped: steps without it", 8*time.Second, func(st api.JobStatus) bool {
		return st.Step >= from+10 || st.State == api.StateSucceeded
	})
	if st.State == api.StateSucceeded {
		t.Fatalf("the job ended while %s was stopped: make it longer", worker)
	}
	timed := 0
	for _, tr := range st.Trainers {
		if tr.StepMs != nil {
			timed++
		}
	}
	if timed == 0 {
		t.Fatalf("no trainer's step_ms in status: %+v", st.Trainers)
	}
	t.Logf("%s stopped: steps %d -> %d", worker, from, st.Step)
}

// killNewTrainer SIGKILLs trainer id of job, just started by a scale-up,
// as soon as status shows its first micro-batch time (it has reported one
// and goes on with the next ones), and waits for the agent to run it anew.
func killNewTrainer(t *testing.T, a *e2erig.Agent, job string, id int) {
	t.Helper()
	worker := fmt.Sprintf("trainer-%d", id)
	st := e2erig.WaitJob(t, a, job, worker+"'s first micro-batch", 30*time.Second, func(st api.JobStatus) bool {
		return slices.ContainsFunc(st.Trainers, func(tr api.TrainerStatus) bool { return tr.ID == id && tr.StepMs != nil })
	})
	pid := a.PIDOf(t, job, worker)
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	e2erig.WaitJob(t, a, job, worker+" back", 30*time.Second, func(st api.JobStatus) bool {
		return st.TrainersCurrent == id+1 && slices.ContainsFunc(st.Trainers, func(tr api.TrainerStatus) bool {
			return tr.ID == id && tr.Restarts > 0
		})
	})
	t.Logf("%s (pid %d) killed at step %d, run anew", worker, pid, st.Step)
}
