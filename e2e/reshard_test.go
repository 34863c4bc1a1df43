package e2e

import (
	"fmt"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gtrain/gtrain/api"
	"github.com/gtrain/gtrain/internal/testing/e2erig"
	"github.com/gtrain/gtrain/jobspec"
)

// reshardSpec is fit-a-line in sync mode with 2 trainers, 4 micro-batches
// of 10 records per step, 2 pservers, 40 passes.
func reshardSpec(name string) jobspec.Spec { return elasticJob(name, 2, 2, 40) }

// TestElasticReshardPservers: a sync job starts with 2 pservers and is
// re-sharded to 3, then back to 2, while it trains; a pserver of the new
// layout is SIGKILLed as it comes up, and the master is SIGKILLed as soon
// as the second re-shard is asked for (its successor must carry it out from
// etcd; TestInProcessReshardMasterDiesAfterCommit kills one after its commit). The job succeeds, applies every record once per pass,
// its trainers never restart, status reports each re-shard's pause, and it
// ends with the model of a run with a fixed pserver count, bit for bit.
func TestElasticReshardPservers(t *testing.T) {
	if testing.Short() {
		t.Skip("real processes")
	}
	begin := time.Now()
	a, _, ref := e2erig.ReferenceSetup(t, reshardSpec)
	refSums := e2erig.ManifestSums(t, ref.ModelDir)
	const job = "resharded"
	spec := reshardSpec(job)
	spec.PserversMin, spec.PserversMax = 1, 3
	e2erig.StartDetached(t, a, spec)
	e2erig.WaitJob(t, a, job, "training", 30*time.Second, func(st api.JobStatus) bool { return st.Step >= 5 })
	if _, errs, code := a.Gctl(t, "job", "scale", job, "--pservers", "4"); code != 2 || !strings.Contains(errs, "bounds [min 1, max 3]") {
		t.Fatalf("scale to 4 pservers: exit %d (%s), want 2 naming the bounds", code, errs)
	}
	var first int64 // the step before the first re-shard was asked for
	for i, m := range []int{3, 2} {
		before := e2erig.JobStatus(t, a, job).Step
		if out, errs, code := a.Gctl(t, "job", "scale", job, "--pservers", fmt.Sprint(m)); code != 0 {
			t.Fatalf("scale to %d pservers: exit %d: %s %s", m, code, out, errs)
		}
		if m == 3 {
			killWhenUp(t, a, job, "pserver-2")
		} else {
			// Mid-way: the master is still waiting for the checkpoint or
			// switching layouts; its successor finds the request in etcd.
			killWhenUp(t, a, job, "master")
		}
		at := e2erig.WaitJob(t, a, job, fmt.Sprintf("re-shard to %d pservers", m), 60*time.Second, func(st api.JobStatus) bool {
			return st.PserversCount == m && st.PserversCurrent == m && !st.PserversResharding && reshards(st) == i+1
		})
		if i == 0 {
			first = before
		}
		if at.ReshardPauseMs <= 0 {
			t.Fatalf("re-shard to %d: status shows no pause: %+v", m, at)
		}
		after := e2erig.WaitJob(t, a, job, fmt.Sprintf("steps with %d pservers", m), 30*time.Second, func(st api.JobStatus) bool {
			return st.Step >= max(at.Step, before)+5 || st.State == api.StateSucceeded
		})
		if after.State == api.StateSucceeded {
			t.Fatalf("the job ended before 5 steps with %d pservers: make it longer", m)
		}
		t.Logf("%d pservers at step %d; training paused %d ms", m, at.Step, at.ReshardPauseMs)
	}
	st := e2erig.WaitJob(t, a, job, "success", 90*time.Second, func(st api.JobStatus) bool { return st.State == api.StateSucceeded })
	if !slices.Equal(st.SamplesApplied, ref.SamplesApplied) {
		t.Fatalf("samples applied %v, want %v", st.SamplesApplied, ref.SamplesApplied)
	}
	for _, tr := range st.Trainers {
		if tr.Restarts != 0 {
			t.Fatalf("%s restarted %d times: trainers must switch layouts without a restart", tr.Name, tr.Restarts)
		}
	}
	if sums := e2erig.ManifestSums(t, st.ModelDir); sums != refSums {
		t.Fatalf("the re-sharded run's model differs from the fixed run's:\nre-sharded: %s\nfixed:      %s", sums, refSums)
	}
	for _, e := range st.Events {
		t.Logf("event: %s", e.What)
		// Re-shards and the crashes during them resume from checkpoints
		// taken after the first re-shard was asked for, never from before.
		if _, rest, ok := strings.Cut(e.What, "rolled back to global checkpoint step "); ok {
			var to int64
			if _, err := fmt.Sscanf(rest, "%d", &to); err != nil || to < first {
				t.Errorf("event %q: rolled back to step %d, before step %d where the re-shards began", e.What, to, first)
			}
		}
	}
	t.Logf("took %s", time.Since(begin).Round(time.Millisecond))
}

// reshards counts the finished re-shards among the job's events.
func reshards(st api.JobStatus) int {
	n := 0
	for _, e := range st.Events {
		if strings.Contains(e.What, "pservers re-sharded from") && strings.Contains(e.What, "training paused") {
			n++
		}
	}
	return n
}

// killWhenUp SIGKILLs worker of job as soon as it runs.
func killWhenUp(t *testing.T, a *e2erig.Agent, job, worker string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		var workers []api.WorkerRow
		e2erig.JSONOf(t, a, &workers, "job", "workers", job)
		for _, w := range workers {
			if w.Name == worker && w.State == "running" && w.PID > 0 {
				if err := syscall.Kill(w.PID, syscall.SIGKILL); err != nil {
					t.Fatal(err)
				}
				t.Logf("%s (pid %d) killed", worker, w.PID)
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s of %s never ran: %+v", worker, job, workers)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
