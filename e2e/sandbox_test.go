package e2e

import (
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gtrain/gtrain/api"
	"github.com/gtrain/gtrain/internal/jobdir"
	"github.com/gtrain/gtrain/internal/sandbox"
	"github.com/gtrain/gtrain/internal/testing/e2erig"
	"github.com/gtrain/gtrain/jobspec"
)

// TestProgramSandbox: a model program written as an attacker, on a real
// agent beside a running job, cannot read /etc/shadow, the agent's data
// dir or the other job's files, write outside its private scratch, signal
// the agent (invisible in its PID namespace: ESRCH) or fork past
// pids.max: its job FAILS with the program's report of each refusal. A program that allocates past its memory request is
// killed by the kernel at submit's declare, and the refusal says so; one
// without resources.trainer.memory is refused at submit. The
// agent and the other job are untouched.
func TestProgramSandbox(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real processes")
	}
	if err := sandbox.Check(); err != nil {
		t.Skipf("this machine cannot isolate programs: %v; SKIPPED, NOT TESTED", err)
	}
	work := t.TempDir()
	e2erig.Housing(t, filepath.Join(work, "data"))
	a := e2erig.StartAgent(t, filepath.Join(work, "agent"))
	ws := filepath.Join(work, "ws")
	if err := os.Mkdir(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	copyFile(t, filepath.Join(e2erig.RepoRoot(), "examples", "program", "gtrainprog.py"), filepath.Join(ws, "gtrainprog.py"))
	copyFile(t, filepath.Join("testdata", "sandbox", "attack.py"), filepath.Join(ws, "attack.py"))
	os.Remove("/dev/shm/gtrain-escape")

	bystander := e2erig.HousingJob("bystander", "data", 0.003)
	bystander.Passes, bystander.BatchSize = 30, 10
	bystander.Checkpoint = jobspec.CheckpointSpec{Every: "20", Keep: 3}
	e2erig.StartDetached(t, a, bystander)
	// The file to steal: one of the bystander's checkpoint files.
	var other string
	e2erig.WaitJob(t, a, "bystander", "the bystander's first checkpoint", 60*time.Second, func(st api.JobStatus) bool {
		_ = filepath.WalkDir(jobdir.Checkpoints(a.DataDir, &bystander), func(path string, d fs.DirEntry, err error) error {
			if err == nil && d.Type().IsRegular() && other == "" {
				other = path
			}
			return nil
		})
		return st.State == api.StateRunning && other != ""
	})

	spec := attackJob(work, a, other)
	_, errs, code := a.Gctl(t, "job", "start", "-f", a.WriteSpec(t, spec), "--detach")
	if code != 0 {
		t.Fatalf("the attacker's submit: exit %d: %s", code, errs)
	}
	st := e2erig.WaitJob(t, a, "attacker", "the attacker's job to fail", 60*time.Second, func(st api.JobStatus) bool { return st.State == api.StateFailed })
	t.Logf("attacker: %s", st.Reason)
	for _, want := range []string{"read /etc/shadow: refused", "read the agent's data dir: refused", "read another job's file: refused",
		"write the workspace: refused (EROFS)", "write outside the workspace: refused", "write /etc: refused (EROFS)",
		"signal the agent: refused (ESRCH)", "fork 10000: refused (EAGAIN)"} {
		if !strings.Contains(st.Reason, want) {
			t.Errorf("the attacker's report lacks %q", want)
		}
	}
	if strings.Contains(st.Reason, "ESCAPED") {
		t.Errorf("an attack succeeded: %s", st.Reason)
	}
	for _, p := range []string{"/dev/shm/gtrain-escape", spec.Env["ATTACK_OUTSIDE"], filepath.Join(ws, "escape.txt"), "/etc/gtrain-escape"} {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("the attacker wrote %s", p)
		}
	}

	hog := attackJob(work, a, other)
	hog.Name = "hog"
	hog.Env["ATTACK_ALLOC"] = strconv.Itoa(512 << 20)
	hog.Resources.Trainer.Memory = "128Mi"
	_, errs, code = a.Gctl(t, "job", "start", "-f", a.WriteSpec(t, hog), "--detach")
	t.Logf("hog: exit %d: %s", code, errs)
	if code != 2 || !strings.Contains(errs, "going past its memory limit") {
		t.Errorf("a program allocating 512Mi under a 128Mi request: exit %d, want 2 naming the memory limit: %s", code, errs)
	}
	unsized := attackJob(work, nil, "")
	unsized.Name, unsized.Resources.Trainer.Memory = "unsized", ""
	if _, errs, code := a.Gctl(t, "job", "start", "-f", a.WriteSpec(t, unsized), "--detach"); code != 2 || !strings.Contains(errs, "resources.trainer.memory") {
		t.Errorf("a program job without a memory request: exit %d, want 2 naming resources.trainer.memory: %s", code, errs)
	}

	st = e2erig.WaitJob(t, a, "bystander", "the bystander to finish", 120*time.Second, func(st api.JobStatus) bool { return st.State == api.StateSucceeded || st.State == api.StateFailed })
	if st.State != api.StateSucceeded {
		t.Errorf("the bystander ended %s: %s", st.State, st.Reason)
	}
	select {
	case err := <-a.Exited:
		t.Fatalf("the agent exited: %v", err)
	default:
	}
}

// attackJob runs attack.py over the housing data, told where to strike
// (a nil agent: nowhere).
func attackJob(work string, a *e2erig.Agent, other string) jobspec.Spec {
	s := jobspec.Spec{Name: "attacker", Mode: jobspec.ModeSync, Trainers: 1, Pservers: 1, Passes: 1, BatchSize: 10, Seed: 1,
		Model:     jobspec.ModelSpec{Kind: jobspec.KindProgram, Entry: "/usr/bin/python3 attack.py", Workspace: "ws", Inputs: 13, Outputs: 1, Timeout: "30s"},
		Optimizer: jobspec.OptimizerSpec{Kind: jobspec.OptimizerSGD, LearningRate: 0.01},
		Data:      jobspec.DataSpec{Train: "data/housing-train-*", Test: "data/housing-test-*"},
		Resources: jobspec.ResourcesSpec{Trainer: jobspec.Resource{Memory: "512Mi"}}}
	if a != nil {
		s.Env = map[string]string{
			"ATTACK_AGENT_FILE": filepath.Join(a.DataDir, "etcd", "member", "snap", "db"),
			"ATTACK_OTHER_FILE": other,
			"ATTACK_OUTSIDE":    filepath.Join(work, "escape.txt"),
			"ATTACK_AGENT_PID":  strconv.Itoa(a.Cmd.Process.Pid),
		}
	}
	return s
}

// TestProgramsRefusedUnisolated: an agent that cannot isolate programs (it
// runs as nobody) says so at start and refuses a program job at submit
// (exit 2, naming the cause and the flag); with
// --allow-unisolated-programs it accepts it and warns.
func TestProgramsRefusedUnisolated(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real processes")
	}
	if os.Geteuid() != 0 {
		t.Skip("needs root to start an agent as nobody; SKIPPED, NOT TESTED")
	}
	work := t.TempDir()
	// nobody must reach the work directory (its parents are the test's).
	for _, d := range []string{filepath.Dir(work), work} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	e2erig.Housing(t, filepath.Join(work, "data"))
	ws := filepath.Join(work, "ws")
	if err := os.Mkdir(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	copyFile(t, filepath.Join(e2erig.RepoRoot(), "examples", "program", "gtrainprog.py"), filepath.Join(ws, "gtrainprog.py"))
	copyFile(t, filepath.Join("testdata", "sandbox", "linear.py"), filepath.Join(ws, "linear.py"))
	spec := attackJob(work, nil, "")
	spec.Name, spec.Model.Entry, spec.Env = "plain", "/usr/bin/python3 linear.py", nil
	nobody := []string{"setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"}
	for _, tc := range []struct {
		dir, logs, errs string
		flags           []string
		code            int
	}{
		{"refusing", "refuses program jobs", "cannot isolate model programs", nil, 2},
		{"allowing", "UNISOLATED", "", []string{"--allow-unisolated-programs"}, 0},
	} {
		data := filepath.Join(work, tc.dir)
		if err := os.Mkdir(data, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.Chown(data, 65534, 65534); err != nil {
			t.Fatal(err)
		}
		a := e2erig.StartAgentWrapped(t, data, nobody, tc.flags...)
		if !strings.Contains(a.Log.String(), tc.logs) {
			t.Errorf("%s: the agent's log at start lacks %q", tc.dir, tc.logs)
		}
		_, errs, code := a.Gctl(t, "job", "start", "-f", a.WriteSpec(t, spec), "--detach")
		t.Logf("%s: submit exit %d %s", tc.dir, code, errs)
		if code != tc.code || !strings.Contains(errs, tc.errs) || (code == 2 && !strings.Contains(errs, "--allow-unisolated-programs")) {
			t.Errorf("%s: submit exit %d, want %d naming %q and the flag: %s", tc.dir, code, tc.code, tc.errs, errs)
		}
		a.Stop(t)
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o644); err != nil {
		t.Fatal(err)
	}
}
