package e2e

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gtrain/gtrain/api"
	"github.com/gtrain/gtrain/internal/testing/e2erig"
	"github.com/gtrain/gtrain/jobspec"
)

// TestQuotaKeepsJobPending (issue 21 item 6): under a quota of one running
// job, a second job of the same user stays PENDING with the reason naming
// the quota while the first runs, `gctl quota get` shows the limit and the
// use, and the second starts once the first is stopped, then ends exact.
// (An agent without TLS takes every call as user anonymous, an admin.)
func TestQuotaKeepsJobPending(t *testing.T) {
	if testing.Short() {
		t.Skip("real processes")
	}
	work := t.TempDir()
	e2erig.Housing(t, filepath.Join(work, "data"))
	a := e2erig.StartAgent(t, filepath.Join(work, "agent"))
	if _, errs, code := a.Gctl(t, "quota", "set", "anonymous", "--jobs", "1", "--cpu", "64"); code != 0 {
		t.Fatalf("quota set: exit %d: %s", code, errs)
	}
	e2erig.StartDetached(t, a, e2erig.ChaosJob("first", 1000))
	e2erig.WaitJob(t, a, "first", "the first job to run", 30*time.Second, func(st api.JobStatus) bool { return st.State == api.StateRunning })
	e2erig.StartDetached(t, a, e2erig.ChaosJob("second", 1))
	const want = "over quota of user anonymous: 1 of 1 jobs running"
	st := e2erig.WaitJob(t, a, "second", "the second job to wait for the quota", 30*time.Second, func(st api.JobStatus) bool {
		return st.State == api.StatePending && strings.HasPrefix(st.Reason, want)
	})
	t.Logf("pending: %s", st.Reason)
	var q api.QuotaRow
	e2erig.JSONOf(t, a, &q, "quota", "get")
	if q.User != "anonymous" || q.Jobs == nil || *q.Jobs != 1 || q.JobsUsed != 1 || q.CPU == nil || q.CPUUsed <= 0 || q.GPUs != nil {
		t.Errorf("quota get: %+v, want jobs 1 of 1 used, cpu used > 0 of 64, no gpu limit", q)
	}
	if out, errs, code := a.Gctl(t, "quota", "get", "anonymous"); code != 0 || !strings.Contains(out, "jobs") {
		t.Errorf("quota get (table): exit %d: %s%s", code, out, errs)
	}
	if _, errs, code := a.Gctl(t, "job", "stop", "first"); code != 0 {
		t.Fatalf("job stop: exit %d: %s", code, errs)
	}
	st = e2erig.WaitJob(t, a, "second", "the second job to run to its end", 60*time.Second, e2erig.Succeeded)
	e2erig.AssertExactPasses(t, st, 1)
}

// preemptJob is fit-a-line in sync mode with a fixed global batch (the
// model does not depend on the trainer count), each role asking a CPU.
func preemptJob(name string, trainers, passes int) jobspec.Spec {
	s := elasticJob(name, trainers, 1, passes)
	s.Resources.Trainer.CPU, s.Resources.Pserver.CPU = 1, 1
	return s
}

// TestPriorityShrinksElasticJob (issue 21 item 6): on a node of 4.2 CPUs an
// elastic job of 2 trainers (min 1) runs (3.1 CPUs); a job of priority 5
// (2.1 CPUs) that does not fit shrinks it to 1 trainer at its next global
// checkpoint, saying why on both, and runs in the room freed; once it ended, the elastic job grows back to 2.
// Both succeed, every record applied once per pass, and the shrunk job's
// model is bit for bit that of its run with a fixed count of 2, its
// remaining trainer never restarted.
func TestPriorityShrinksElasticJob(t *testing.T) {
	if testing.Short() {
		t.Skip("real processes")
	}
	work := t.TempDir()
	e2erig.Housing(t, filepath.Join(work, "data"))
	a := e2erig.StartAgentWith(t, filepath.Join(work, "agent"), "--cpu", "4.2")
	if _, errs, code := a.Gctl(t, "job", "start", "-f", a.WriteSpec(t, preemptJob("reference", 2, 150))); code != 0 {
		t.Fatalf("reference run: exit %d: %s", code, errs)
	}
	refSums := e2erig.ManifestSums(t, e2erig.JobStatus(t, a, "reference").ModelDir)
	low := preemptJob("low", 2, 150)
	low.TrainersMin, low.TrainersMax = 1, 2
	e2erig.StartDetached(t, a, low)
	e2erig.WaitJob(t, a, "low", "low to train with 2 trainers", 30*time.Second, func(st api.JobStatus) bool {
		return st.TrainersCurrent == 2 && st.Step > 0
	})
	high := preemptJob("high", 1, 2)
	high.Priority = 5
	e2erig.StartDetached(t, a, high)
	st := e2erig.WaitJob(t, a, "low", "low to shrink to 1 trainer", 30*time.Second, func(st api.JobStatus) bool {
		return st.TrainersCurrent == 1 || st.State == api.StateSucceeded
	})
	if st.State == api.StateSucceeded {
		t.Fatalf("low ended before high shrank it: make it longer")
	}
	hi := e2erig.WaitJob(t, a, "high", "high to succeed", 60*time.Second, e2erig.Succeeded)
	e2erig.AssertExactPasses(t, hi, 2)
	st = e2erig.WaitJob(t, a, "low", "low to succeed", 90*time.Second, e2erig.Succeeded)
	e2erig.AssertExactPasses(t, st, 150)
	if e2erig.CountEvents(st, "trainer-1 will stop at the next global checkpoint for higher priority: job high (priority 5)") != 1 ||
		e2erig.CountEvents(st, "stopped trainer-1: shrunk to 1 trainers (min 1) for higher priority: job high (priority 5)") != 1 ||
		e2erig.CountEvents(hi, "waits for room: shrinking lower-priority elastic jobs toward their min: low (trainer-1)") != 1 {
		e2erig.LogEvents(t, st)
		e2erig.LogEvents(t, hi)
		t.Errorf("want one shrink event on low and one on high")
	}
	if e2erig.CountEvents(st, "placed trainer-1 on") != 1 {
		e2erig.LogEvents(t, st)
		t.Errorf("low did not grow back to 2 trainers once high ended")
	}
	for _, tr := range st.Trainers {
		if tr.Name == "trainer-0" && tr.Restarts != 0 {
			t.Errorf("trainer-0 restarted %d times: a shrink must not restart the trainers it keeps", tr.Restarts)
		}
	}
	if sums := e2erig.ManifestSums(t, st.ModelDir); sums != refSums {
		t.Fatalf("the shrunk run's model differs from the fixed run's:\nshrunk: %s\nfixed:  %s", sums, refSums)
	}
}
