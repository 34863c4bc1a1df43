package e2e

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gtrain/gtrain/internal/testing/e2erig"
	"github.com/gtrain/gtrain/internal/testing/wait"
	"github.com/gtrain/gtrain/jobspec"

	"github.com/gtrain/gtrain/api"
	"github.com/gtrain/gtrain/internal/testing/etcdtest"
	"github.com/gtrain/gtrain/model"
)

// What an operator trips over (issue 17), walked against real agents,
// real etcd and real role processes: a job that diverges, a disk that
// fills under the model, a data dir taken or too small, re-attaching to a
// job, and what the workers table says once a job ended. Each case runs on
// an agent of its own.
func TestOperatorFaults(t *testing.T) {
	cases := []struct {
		name string
		run  func(t *testing.T)
	}{
		// (Names without commas: they become temp dir names, which a YAML flow map splits.)
		{"a diverging job fails with the reason and no master restart", testDivergingJob},
		{"a full disk holds the pass end with a warning until freed", testModelWriteOnFullDisk},
		{"a second agent on a data dir in use exits at once naming the holder", testDataDirInUse},
		{"a data dir on a small disk is refused with what it has and needs", testDataDirTooSmall},
		{"job watch re-attaches and the workers of an ended job are not running", testWatchAndWorkersAfterSuccess},
		{"a node that dies is named with the roles it took", testNodeLostEvent},
	}
	for _, tc := range cases {
		t.Run(tc.name, tc.run)
	}
}

// housingAgent converts the housing data under a fresh work dir and starts
// an agent there; the data is at work/data.
func housingAgent(t *testing.T) (a *e2erig.Agent, work string) {
	t.Helper()
	work = t.TempDir()
	e2erig.Housing(t, filepath.Join(work, "data"))
	return e2erig.StartAgent(t, filepath.Join(work, "agent")), work
}

var divergedReason = regexp.MustCompile(`^diverged at pass \d+ step \d+ \(((test )?loss|parameter \S+ holds) (inf|-inf|nan)\): lower the learning rate$`)

func testDivergingJob(t *testing.T) {
	a, work := housingAgent(t)
	spec := fitALineJob("diverge", jobspec.ModeSync, 20, filepath.Join(work, "data"))
	spec.Optimizer.LearningRate = 1000000
	out, errs, code := a.Gctl(t, "job", "start", "-f", e2erig.WriteSpec(t, work, spec))
	if code != 1 {
		t.Fatalf("job start of a diverging job: exit %d, want 1\n%s%s", code, out, errs)
	}
	st := e2erig.JobStatus(t, a, "diverge")
	if st.State != api.StateFailed || !divergedReason.MatchString(st.Reason) {
		t.Fatalf("state %s, reason %q; want FAILED, \"diverged at pass P step S (loss inf): lower the learning rate\"", st.State, st.Reason)
	}
	if !strings.Contains(out, "reason: "+st.Reason) {
		t.Errorf("job start's summary does not give the reason %q:\n%s", st.Reason, out)
	}
	if st.Master.Restarts != 0 || hasEvent(st, "master exited") || hasEvent(st, "crashed") {
		t.Errorf("the master restarted (%d restarts); events %+v", st.Master.Restarts, st.Events)
	}
	if !hasEvent(st, st.Reason) {
		t.Errorf("no event says the job diverged: %+v", st.Events)
	}
}

// hasEvent reports whether an event of st contains what.
func hasEvent(st api.JobStatus, what string) bool { return countEventsContaining(st, what) > 0 }

const modelWriteWarning = "master cannot write the model of pass "

// fullDiskPasses: the disk is filled once a pass is written, a few tenths
// of a second in (a pass takes ~25 ms); the job, held at the next pass
// end, must not have ended by then. 100 passes (2.5 s) leave five times
// that; 300 made the run after the disk is freed three times longer.
const fullDiskPasses = 100

func testModelWriteOnFullDisk(t *testing.T) {
	work := t.TempDir()
	e2erig.Housing(t, filepath.Join(work, "data"))
	ck := filepath.Join(work, "ck")
	mountTmpfs(t, ck, "8m") // before the agent: unmounted after it stopped
	a := e2erig.StartAgent(t, filepath.Join(work, "agent"))
	spec := fitALineJob("fulldisk", jobspec.ModeSync, fullDiskPasses, filepath.Join(work, "data"))
	spec.Checkpoint = jobspec.CheckpointSpec{Dir: "ck", Every: "200", Keep: 2}
	e2erig.StartDetached(t, a, spec)
	e2erig.WaitJob(t, a, "fulldisk", "a pass written", 30*time.Second, func(st api.JobStatus) bool { return st.Pass >= 1 })

	free := keepFull(t, ck)
	st := e2erig.WaitJob(t, a, "fulldisk", "the model write's warning", 30*time.Second, func(st api.JobStatus) bool {
		return warns(st, modelWriteWarning)
	})
	if !warns(st, "no space left on device") || !hasEvent(st, modelWriteWarning) {
		t.Errorf("the warning does not name the cause, or no event tells it: warnings %q, events %+v", st.Warnings, st.Events)
	}
	held := st.Pass
	st = waitStill(t, a, "fulldisk", "the job to stand still at the pass end", time.Second, 30*time.Second)
	if st.State != api.StateRunning || st.Pass != held {
		t.Errorf("with the disk full the job went on: state %s, pass %d, want RUNNING at pass %d", st.State, st.Pass, held)
	}

	free()
	st = e2erig.WaitJob(t, a, "fulldisk", "the job to finish once the disk has room", 90*time.Second, e2erig.Succeeded)
	if !hasEvent(st, "the master wrote the model of pass ") || len(st.Warnings) != 0 {
		t.Errorf("after space returned: warnings %q, events %+v; want none, and an event saying so", st.Warnings, st.Events)
	}
	e2erig.AssertExactPasses(t, st, fullDiskPasses)
	if _, err := os.Stat(filepath.Join(st.ModelDir, model.PassDirName(fullDiskPasses-1), "manifest.json")); err != nil {
		t.Errorf("the last pass's model is missing: %v", err)
	}
}

// warns reports whether a warning of st contains what.
func warns(st api.JobStatus, what string) bool {
	for _, w := range st.Warnings {
		if strings.Contains(w, what) {
			return true
		}
	}
	return false
}

// mountTmpfs mounts a tmpfs of size on dir (created) until the test ends.
func mountTmpfs(t *testing.T, dir, size string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size="+size); err != nil {
		t.Skipf("SKIPPED, NOT TESTED: mounting a %s tmpfs needs root: %v", size, err)
	}
	t.Cleanup(func() { _ = syscall.Unmount(dir, syscall.MNT_DETACH) })
}

// keepFull fills dir's filesystem and keeps it full (what the job frees
// is taken again) until the returned func, which frees it all.
func keepFull(t *testing.T, dir string) (free func()) {
	t.Helper()
	f, err := os.Create(filepath.Join(dir, "filler"))
	if err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	chunk := make([]byte, 4096)
	fill := func() {
		for {
			if _, err := f.Write(chunk); err != nil {
				return
			}
		}
	}
	fill()
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
				fill()
			}
		}
	}()
	var once sync.Once
	free = func() {
		once.Do(func() {
			close(stop)
			wg.Wait()
			_ = f.Close()
			if err := os.Remove(f.Name()); err != nil {
				t.Error(err)
			}
		})
	}
	t.Cleanup(free)
	return free
}

// runGtraind runs gtraind with args until it exits, killed after 20 s
// (an agent that should have refused to start).
func runGtraind(t *testing.T, args ...string) (stderr string, code int, took time.Duration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(e2erig.BinDir, "gtraind"), args...)
	var errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &errb, &errb
	begin := time.Now()
	err := cmd.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("gtraind %v: %v", args, err)
	}
	return errb.String(), code, time.Since(begin)
}

// devAgentArgs is `gtraind agent --dev` on dataDir with free ports.
func devAgentArgs(t *testing.T, dataDir, node string) []string {
	p := e2erig.FreePorts(t, 4)
	return []string{"agent", "--dev", "--data-dir", dataDir, "--node-name", node, "--api-addr", p[0],
		"--gossip-addr", p[1], "--etcd-client-addr", p[2], "--etcd-peer-addr", p[3]}
}

func testDataDirInUse(t *testing.T) {
	dir := t.TempDir()
	a := e2erig.StartAgent(t, dir)
	errs, code, took := runGtraind(t, devAgentArgs(t, dir, "second")...)
	holder := fmt.Sprintf("held by another gtraind agent (pid %d, node e2e-node", a.Cmd.Process.Pid)
	if code != 2 || took > 5*time.Second || !strings.Contains(errs, holder) || !strings.Contains(errs, "--data-dir") {
		t.Fatalf("second agent on %s: exit %d after %s:\n%s\nwant exit 2 at once, naming %q and --data-dir", dir, code, took, errs, holder)
	}
	if out, _, code := a.Gctl(t, "node", "list"); code != 0 || !strings.Contains(out, "ready") {
		t.Errorf("the first agent suffered: node list exit %d:\n%s", code, out)
	}
}

func testDataDirTooSmall(t *testing.T) {
	disk := filepath.Join(t.TempDir(), "small")
	mountTmpfs(t, disk, "20m")
	errs, code, took := runGtraind(t, devAgentArgs(t, filepath.Join(disk, "agent"), "small")...)
	want := regexp.MustCompile(`data dir \(--data-dir\) \S+ has \d+ MiB free; the agent needs at least 80 MiB there \(.*64 MiB write-ahead log.*\): free space or choose another --data-dir`)
	if code != 1 || took > 10*time.Second || !want.MatchString(errs) || strings.Contains(errs, "panic") {
		t.Fatalf("agent on a 20 MiB disk: exit %d after %s:\n%s\nwant exit 1 at once matching %s", code, took, errs, want)
	}
}

func testWatchAndWorkersAfterSuccess(t *testing.T) {
	a, work := housingAgent(t)
	e2erig.StartDetached(t, a, fitALineJob("watched", jobspec.ModeSync, 150, filepath.Join(work, "data")))
	out, errs, code := a.Gctl(t, "job", "watch", "watched")
	if code != 0 || !strings.Contains(out, "watching job watched") || !strings.Contains(out, "[RUNNING]") ||
		!strings.Contains(out, "job watched SUCCEEDED after 150/150 passes") {
		t.Fatalf("job watch: exit %d, want 0 with the progress of a running job and its end:\n%s%s", code, out, errs)
	}
	if _, errs, code := a.Gctl(t, "job", "watch", "nosuch"); code != 2 || !strings.Contains(errs, "not found") {
		t.Errorf("job watch of an unknown job: exit %d, want 2 saying so: %s", code, errs)
	}

	var rows []api.WorkerRow
	e2erig.JSONOf(t, a, &rows, "job", "workers", "watched")
	for _, r := range rows {
		if r.State == api.WorkerRunning || r.State == api.WorkerStarting {
			t.Errorf("after SUCCEEDED the workers table shows %s %s", r.Name, r.State)
		}
	}
	// It leaves once its trainers have heard the end: under load a few seconds.
	wait.Eventually(t, 10*time.Second, "the master to be shown exited after SUCCEEDED", func() (bool, string) {
		e2erig.JSONOf(t, a, &rows, "job", "workers", "watched")
		return len(rows) > 0 && rows[0].Name == "master" && rows[0].State == api.WorkerExited, fmt.Sprintf("%+v", rows)
	})
	status, _, _ := a.Gctl(t, "job", "status", "watched")
	if !regexp.MustCompile(`(?m)^\s+0\s+pserver-0\s.*\s-\s*$`).MatchString(status) {
		t.Errorf("pserver-0's CHECKPOINT STEP is not \"-\" once its registration is gone:\n%s", status)
	}
}

func testNodeLostEvent(t *testing.T) {
	work := t.TempDir()
	e2erig.Housing(t, filepath.Join(work, "data"))
	endpoint := etcdtest.Start(t).Endpoint
	n1 := startClusterAgent(t, "n1", filepath.Join(work, "n1"), endpoint)
	n2 := startClusterAgent(t, "n2", filepath.Join(work, "n2"), endpoint)
	spec := clusterJob("lost", work)
	spec.Passes = 400
	e2erig.StartDetached(t, n1, spec)
	var on2 []string
	e2erig.WaitJob(t, n1, "lost", "training with roles on n2", 60*time.Second, func(st api.JobStatus) bool {
		on2 = rolesOn(st, "n2")
		return st.State == api.StateRunning && st.Step > 40 && len(on2) > 0
	})
	if err := n2.Cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	<-n2.Exited
	want := "node n2 lost: " + strings.Join(on2, ", ")
	st := e2erig.WaitJob(t, n1, "lost", "an event naming n2's roles", 30*time.Second, func(st api.JobStatus) bool {
		return hasEvent(st, "node n2 lost: ")
	})
	if !hasEvent(st, want) || countEventsContaining(st, "node n2 lost: ") != 1 {
		t.Errorf("events %+v; want one %q", st.Events, want)
	}
	if _, errs, code := n1.Gctl(t, "job", "stop", "lost"); code != 0 {
		t.Errorf("job stop: exit %d: %s", code, errs)
	}
}

// rolesOn names the job's roles placed on node, in the job's order
// (master, pservers, trainers).
func rolesOn(st api.JobStatus, node string) []string {
	var out []string
	if st.Master.Node == node {
		out = append(out, st.Master.Name)
	}
	for _, p := range st.Pservers {
		if p.Node == node {
			out = append(out, p.Name)
		}
	}
	for _, tr := range st.Trainers {
		if tr.Node == node {
			out = append(out, tr.Name)
		}
	}
	return out
}
