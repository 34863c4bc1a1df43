package e2e

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gtrain/gtrain/api"
	"github.com/gtrain/gtrain/internal/testing/e2erig"
	"github.com/gtrain/gtrain/internal/testing/etcdtest"
)

// startSizedAgent starts a real `gtraind agent` offering cpu CPUs, with
// more agent flags. It has no TLS and no --dev (several agents share one
// etcd), so it says --insecure: its API serves anonymous callers.
func startSizedAgent(t *testing.T, name, dataDir, endpoint, cpu string, flags ...string) *e2erig.Agent {
	t.Helper()
	p := e2erig.FreePorts(t, 2)
	a := &e2erig.Agent{DataDir: dataDir, API: p[0], Log: &e2erig.LogBuffer{}}
	a.Launch(t, append([]string{"agent", "--insecure", "--etcd-endpoints", endpoint, "--data-dir", dataDir, "--node-name", name,
		"--api-addr", a.API, "--gossip-addr", p[1], "--cpu", cpu}, flags...)...)
	return a
}

// TestElasticBelowMinWaitsThenGrows: a job whose trainers do not fit waits
// PENDING while fewer than its min fit, with the reason in status; when a
// node joins it starts with what fits (>= min), and when another joins it
// grows to its count, all without a restart, every record applied once.
func TestElasticBelowMinWaitsThenGrows(t *testing.T) {
	if testing.Short() {
		t.Skip("real processes")
	}
	begin := time.Now()
	work := t.TempDir()
	e2erig.Housing(t, filepath.Join(work, "data"))
	endpoint := etcdtest.Start(t).Endpoint
	// n1 holds the master, the pserver and 2 trainers: below the min of 3.
	a := startSizedAgent(t, "n1", filepath.Join(work, "n1"), endpoint, "2.5")
	e2erig.StartDetached(t, a, minJob("grow", work))
	st := e2erig.WaitJob(t, a, "grow", "the job to wait below its min", 30*time.Second, func(st api.JobStatus) bool {
		return st.State == api.StatePending && strings.Contains(st.Reason, "min")
	})
	t.Logf("pending: %s", st.Reason)
	time.Sleep(2 * time.Second) // scheduler passes: it must still wait
	if st = e2erig.JobStatus(t, a, "grow"); st.State != api.StatePending || st.TrainersCurrent != 0 {
		t.Fatalf("below min: state %s with %d trainers running, want PENDING with none: %s", st.State, st.TrainersCurrent, st.Reason)
	}
	startSizedAgent(t, "n2", filepath.Join(work, "n2"), endpoint, "1")
	st = e2erig.WaitJob(t, a, "grow", "the job to run with 3 of 4 trainers", 60*time.Second, func(st api.JobStatus) bool {
		return st.State == api.StateRunning && st.TrainersCurrent == 3 && st.Step > 0
	})
	t.Logf("running with %d trainers at step %d: %s", st.TrainersCurrent, st.Step, st.Reason)
	if st.TrainersCount != 4 || st.TrainersMin != 3 {
		t.Errorf("counts: desired %d, min %d; want 4 and 3", st.TrainersCount, st.TrainersMin)
	}
	startSizedAgent(t, "n3", filepath.Join(work, "n3"), endpoint, "1")
	st = e2erig.WaitJob(t, a, "grow", "the job to grow to 4 trainers", 60*time.Second, func(st api.JobStatus) bool {
		return st.TrainersCurrent == 4 || st.State == api.StateSucceeded
	})
	if st.State == api.StateSucceeded {
		t.Fatalf("the job ended before it grew to 4 trainers (%d passes); it must still be training when n3 joins", len(st.SamplesApplied))
	}
	growStep := st.Step
	st = e2erig.WaitJob(t, a, "grow", "the job to finish", 120*time.Second, func(st api.JobStatus) bool { return st.State == api.StateSucceeded })
	for _, tr := range st.Trainers {
		if tr.Restarts != 0 {
			t.Errorf("%s restarted %d times: growing must not restart trainers", tr.Name, tr.Restarts)
		}
	}
	if st.Step <= growStep {
		t.Errorf("no step after the job grew at step %d (final step %d)", growStep, st.Step)
	}
	e2erig.AssertExactPasses(t, st, 20)
	t.Logf("took %s", time.Since(begin).Round(time.Second))
}
