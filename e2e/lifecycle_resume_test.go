package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gtrain/gtrain/api"
	"github.com/gtrain/gtrain/coord"
	"github.com/gtrain/gtrain/internal/testing/e2erig"
	"github.com/gtrain/gtrain/internal/testing/wait"
	"github.com/gtrain/gtrain/jobspec"
)

// resumePasses: the reference runs them all; the resumed job is submitted
// with 10 fewer (about 1,400 steps, more than two seconds: time to see its
// first global checkpoint and stop it well before its end) and resumed
// with --passes resumePasses.
const resumePasses = 50

// TestJobResume (issue 21 item 2): a sync job stopped by `gctl job stop`
// past its first global checkpoint, then continued by `gctl job resume
// --passes --resources trainer.cpu=2`, ends SUCCEEDED, every record applied
// exactly once per pass, with bit for bit the model of a run that never
// stopped, its trainers on 2 threads, and an event naming the checkpoint
// and the changes; resuming a job that SUCCEEDED, runs, or does not exist,
// or with a resource that is not a number, is refused with exit 2.
func TestJobResume(t *testing.T) {
	if testing.Short() {
		t.Skip("real processes")
	}
	// Room for the resumed trainers' cpu: 2 (threads on 2 cores compute
	// the same bits, only slower).
	a, _, refSt := e2erig.ReferenceSetup(t, func(name string) jobspec.Spec { return e2erig.ChaosJob(name, resumePasses) }, "--cpu", "8")
	refSums := e2erig.ManifestSums(t, refSt.ModelDir)
	resumeRefused(t, a, "reference", "job reference SUCCEEDED: only a STOPPED or FAILED job can be resumed")
	resumeRefused(t, a, "nosuch", "job nosuch not found")

	const job = "resumed"
	e2erig.StartDetached(t, a, e2erig.ChaosJob(job, resumePasses-10))
	cli, err := coord.Dial(context.Background(), []string{"http://" + a.Etcd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	wait.Eventually(t, 60*time.Second, "the job's first global checkpoint", func() (bool, string) {
		steps, err := coord.KeptGlobalSteps(context.Background(), cli, job)
		return err == nil && len(steps) > 0, fmt.Sprintf("%v %v", steps, err)
	})
	resumeRefused(t, a, job, "job resumed is RUNNING: only a STOPPED or FAILED job can be resumed")
	if _, errs, code := a.Gctl(t, "job", "stop", job); code != 0 {
		t.Fatalf("job stop: exit %d: %s", code, errs)
	}
	st := e2erig.WaitJob(t, a, job, "the job to stop", 30*time.Second, func(st api.JobStatus) bool { return st.State == api.StateStopped })
	if st.Pass >= resumePasses-10 {
		t.Fatalf("the job ran all its passes before it was stopped (pass %d): nothing to resume", st.Pass)
	}
	t.Logf("stopped at pass %d step %d", st.Pass, st.Step)

	resumeRefused(t, a, job, "resources.trainer.cpu")
	out, errs, code := a.Gctl(t, "job", "resume", job, "--passes", strconv.Itoa(resumePasses), "--resources", "trainer.cpu=2", "-o", "json")
	if code != 0 {
		t.Fatalf("job resume: exit %d: %s", code, errs)
	}
	var res struct {
		PreviousState string `json:"previous_state"`
		FromStep      int64  `json:"from_step"`
		Passes        int    `json:"passes"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil || res.FromStep <= 0 || res.Passes != resumePasses || res.PreviousState != "STOPPED" {
		t.Errorf("job resume -o json: %s (%v): want previous_state STOPPED, a global checkpoint step > 0 and %d passes", out, err, resumePasses)
	}
	st = e2erig.WaitJob(t, a, job, "the resumed job to finish", 120*time.Second, e2erig.Succeeded)
	e2erig.LogEvents(t, st)
	e2erig.AssertExactPasses(t, st, resumePasses)
	e2erig.AssertSameModel(t, st, refSums)
	resumedFrom := fmt.Sprintf("from global checkpoint step %d, after it ended STOPPED; passes 40 -> %d, resources.trainer.cpu", res.FromStep, resumePasses)
	if n := countEventsContaining(st, resumedFrom); n != 1 || e2erig.CountEvents(st, "job resumed by anonymous") != 1 {
		t.Errorf("%d events of the resume %q, want 1", n, resumedFrom)
	}
	if countEventsContaining(st, fmt.Sprintf("restored from checkpoint step %d", res.FromStep)) != 2 {
		t.Errorf("want events of both pservers restored from step %d", res.FromStep)
	}
	// The trainers started after the resume computed on the 2 threads
	// asked; the model above did not depend on it.
	log, err := os.ReadFile(filepath.Join(a.DataDir, "jobs", job, "log", "trainer-0.log"))
	if err != nil || !strings.Contains(string(log), "threads=2") {
		t.Errorf("the resumed trainer-0's log does not say threads=2 (%v)", err)
	}
}

// resumeRefused: `gctl job resume job` exits 2 saying want (a want naming
// resources is asked with a bad --resources).
func resumeRefused(t *testing.T, a *e2erig.Agent, job, want string) {
	t.Helper()
	args := []string{"job", "resume", job}
	if strings.HasPrefix(want, "resources.") {
		args = append(args, "--resources", "trainer.cpu=two")
	}
	if _, errs, code := a.Gctl(t, args...); code != 2 || !strings.Contains(errs, want) {
		t.Errorf("job resume %s: exit %d: %s\nwant exit 2 saying %q", job, code, errs, want)
	}
}

// TestJobResumeAsync: an async job keeps no global checkpoint; stopped
// mid-run, its pserver checkpoints the step it stopped at before it exits,
// and `gctl job resume` restarts it from there: the job ends SUCCEEDED with
// every pass's records counted once, and the pserver restarted from the
// very step it had when the job stopped (no update lost).
func TestJobResumeAsync(t *testing.T) {
	if testing.Short() {
		t.Skip("real processes")
	}
	const job, passes = "aresume", 60
	a, res, _ := startAsyncJob(t, job, passes, 3)
	if _, errs, code := a.Gctl(t, "job", "stop", job); code != 0 {
		t.Fatalf("job stop: exit %d: %s", code, errs)
	}
	st := e2erig.WaitJob(t, a, job, "the job to stop", 30*time.Second, func(st api.JobStatus) bool { return st.State == api.StateStopped })
	if st.Pass >= passes {
		t.Fatalf("the job ran all its passes before it was stopped (pass %d): make it longer", st.Pass)
	}
	logPath := filepath.Join(a.DataDir, "jobs", job, "log", "pserver-0.log")
	var final int64
	wait.Eventually(t, 20*time.Second, "pserver-0's final checkpoint", func() (bool, string) {
		log, _ := os.ReadFile(logPath)
		m := regexp.MustCompile(`final checkpoint written.* step=(\d+)`).FindSubmatch(log)
		if m != nil {
			final, _ = strconv.ParseInt(string(m[1]), 10, 64)
		}
		return m != nil, "no line \"final checkpoint written\" in " + logPath
	})
	out, errs, code := a.Gctl(t, "job", "resume", job, "-o", "json")
	if code != 0 {
		t.Fatalf("job resume: exit %d: %s", code, errs)
	}
	var resumed struct {
		PserverSteps []int64 `json:"pserver_steps"`
	}
	if err := json.Unmarshal([]byte(out), &resumed); err != nil || len(resumed.PserverSteps) != 1 || resumed.PserverSteps[0] != final || final <= 0 {
		t.Fatalf("job resume -o json: %s (%v): want pserver_steps [%d], the final checkpoint's", out, err, final)
	}
	st = e2erig.WaitJob(t, a, job, "the resumed job to finish", 120*time.Second, e2erig.Succeeded)
	e2erig.LogEvents(t, st)
	e2erig.AssertEachRecordOnce(t, st, passes, res.TrainRecords)
	if n := countEventsContaining(st, fmt.Sprintf("pserver-0 restarted from checkpoint step %d", final)); n != 1 {
		t.Errorf("%d events of pserver-0 restarted from step %d, want 1", n, final)
	}
}
