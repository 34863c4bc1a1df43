package e2erig

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gtrain/gtrain/api"
	"github.com/gtrain/gtrain/internal/testing/logcheck"
	"github.com/gtrain/gtrain/internal/testing/wait"
	"github.com/gtrain/gtrain/jobspec"
)

// ReferenceSetup starts an agent (with agentFlags) over the housing data
// and runs specOf's job once uninterrupted, as "reference".
func ReferenceSetup(t *testing.T, specOf func(name string) jobspec.Spec, agentFlags ...string) (a *Agent, work string, ref api.JobStatus) {
	t.Helper()
	work = t.TempDir()
	Housing(t, filepath.Join(work, "data"))
	a = StartAgentWith(t, filepath.Join(work, "agent"), agentFlags...)
	if _, errs, code := a.Gctl(t, "job", "start", "-f", WriteSpec(t, work, specOf("reference"))); code != 0 {
		t.Fatalf("reference run: exit %d: %s", code, errs)
	}
	return a, work, JobStatus(t, a, "reference")
}

// PIDOf is the pid of the job's worker (master, trainer-0, pserver-1) as
// the agent's status shows it; it fails the test when none runs.
func (a *Agent) PIDOf(t *testing.T, job, worker string) int {
	t.Helper()
	var workers []api.WorkerRow
	JSONOf(t, a, &workers, "job", "workers", job)
	if pid := RunningPID(workers, worker); pid > 0 {
		return pid
	}
	t.Fatalf("%s of %s is not running: %+v", worker, job, workers)
	return 0
}

// RunningPID is the PID of worker among workers if it runs, else 0.
func RunningPID(workers []api.WorkerRow, worker string) int {
	for _, w := range workers {
		if w.Name == worker && w.State == "running" && w.PID > 0 {
			return w.PID
		}
	}
	return 0
}

// WaitPID waits until worker of job runs and returns its PID.
func (a *Agent) WaitPID(t *testing.T, job, worker string, timeout time.Duration) int {
	t.Helper()
	var pid int
	wait.Eventually(t, timeout, worker+" of "+job+" to run", func() (bool, string) {
		var workers []api.WorkerRow
		JSONOf(t, a, &workers, "job", "workers", job)
		pid = RunningPID(workers, worker)
		return pid > 0, fmt.Sprintf("%+v", workers)
	})
	return pid
}

// The agents on this host share the test's file system: a spec goes into
// the directory above their data directory, the test's work directory.
func (a *Agent) WriteSpec(t *testing.T, s jobspec.Spec) string {
	t.Helper()
	return WriteSpec(t, filepath.Dir(a.DataDir), s)
}

// Agent is a real `gtraind agent --dev` process.
type Agent struct {
	Cmd     *exec.Cmd
	DataDir string
	API     string
	Etcd    string
	Log     *LogBuffer
	Exited  chan error
	// Wrap, when set, is the command that runs gtraind (its path and the
	// arguments follow): setpriv, to run the agent as another user.
	Wrap []string
}

// StartAgent starts a real `gtraind agent --dev` over dataDir and waits
// until it serves.
func StartAgent(t *testing.T, dataDir string) *Agent {
	t.Helper()
	return StartAgentWith(t, dataDir)
}

// StartAgentWith is StartAgent with more agent flags.
func StartAgentWith(t *testing.T, dataDir string, flags ...string) *Agent {
	t.Helper()
	return StartAgentWrapped(t, dataDir, nil, flags...)
}

// StartAgentWrapped is StartAgentWith run through wrap (Agent.Wrap).
func StartAgentWrapped(t *testing.T, dataDir string, wrap []string, flags ...string) *Agent {
	t.Helper()
	ports := FreePorts(t, 4)
	a := &Agent{DataDir: dataDir, API: ports[0], Etcd: ports[1], Log: &LogBuffer{}, Wrap: wrap}
	a.Launch(t, append([]string{"agent", "--dev", "--data-dir", dataDir,
		"--node-name", "e2e-node", "--api-addr", a.API, "--gossip-addr", ports[2],
		"--etcd-client-addr", a.Etcd, "--etcd-peer-addr", ports[3]}, flags...)...)
	return a
}

// Launch runs gtraind with args and waits until the agent's node is ready.
func (a *Agent) Launch(t *testing.T, args ...string) {
	t.Helper()
	a.Exited = make(chan error, 1)
	a.Cmd = exec.Command(filepath.Join(BinDir, "gtraind"), args...)
	if len(a.Wrap) > 0 {
		a.Cmd = exec.Command(a.Wrap[0], append(append(slices.Clone(a.Wrap[1:]), a.Cmd.Path), args...)...)
	}
	a.Cmd.Stdout, a.Cmd.Stderr = a.Log, a.Log
	if err := a.Cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { a.Exited <- a.Cmd.Wait() }()
	t.Cleanup(func() {
		a.Stop(t)
		if t.Failed() {
			t.Logf("agent log:\n%s", a.Log.String())
			logs, _ := filepath.Glob(filepath.Join(a.DataDir, "jobs", "*", "log", "*.log"))
			for _, l := range logs {
				b, _ := os.ReadFile(l)
				lines := strings.Split(strings.TrimSpace(string(b)), "\n")
				t.Logf("--- %s (last lines):\n%s", l, strings.Join(lines[max(0, len(lines)-25):], "\n"))
			}
		}
	})
	err := wait.Until(60*time.Second, "the agent to be ready", func() (bool, string) {
		out, _, code := a.Gctl(t, "node", "list", "-o", "json")
		if code == 0 && strings.Contains(out, `"ready"`) {
			return true, ""
		}
		select {
		case err := <-a.Exited:
			t.Fatalf("agent exited before ready: %v\n%s", err, a.Log.String())
		default:
		}
		return false, out
	})
	if err != nil {
		t.Fatalf("%v\n%s", err, a.Log.String())
	}
}

// Stop sends SIGTERM and requires a clean exit and no process left behind.
func (a *Agent) Stop(t *testing.T) {
	t.Helper()
	if a.Cmd.ProcessState != nil {
		return
	}
	_ = a.Cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-a.Exited:
		if err != nil {
			t.Errorf("agent exit after SIGTERM: %v (want 0)", err)
		}
	case <-time.After(30 * time.Second):
		_ = a.Cmd.Process.Kill()
		t.Errorf("agent did not exit 30s after SIGTERM")
	}
	if left := ProcessesUsing(a.DataDir); len(left) > 0 {
		t.Errorf("processes left behind after the agent stopped: %v", left)
		for _, pid := range left {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}

// ProcessesUsing lists live processes whose command line names dataDir.
func ProcessesUsing(dataDir string) []int {
	var pids []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		var pid int
		if _, err := fmt.Sscanf(e.Name(), "%d", &pid); err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil {
			continue
		}
		if stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat")); err == nil && strings.Contains(string(stat), ") Z ") {
			continue // a zombie is already dead
		}
		if strings.Contains(string(b), dataDir) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// Gctl runs bin/gctl against the agent and returns stdout, stderr and the exit code.
func (a *Agent) Gctl(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	return RunGctl(t, a.API, args...)
}

// RunGctl runs gctl ARGS against the agent at addr; it returns stdout,
// stderr and the exit code.
func RunGctl(t *testing.T, addr string, args ...string) (string, string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(BinDir, "gctl"), append([]string{"--addr", addr}, args...)...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	cmd.Env = append(os.Environ(), "HOME="+t.TempDir())
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("gctl %v: %v", args, err)
	}
	return out.String(), errb.String(), code
}

// JSONUnmarshal decodes gctl's JSON output s into v.
func JSONUnmarshal(s string, v any) error { return json.Unmarshal([]byte(s), v) }

// ReferenceRun runs the job of spec to its end and requires it to succeed
// with a test accuracy of at least 0.6.
func (a *Agent) ReferenceRun(t *testing.T, work, name string, spec jobspec.Spec) api.JobStatus {
	t.Helper()
	started := time.Now()
	out, errs, code := a.Gctl(t, "job", "start", "-f", WriteSpec(t, work, spec))
	if code != 0 {
		t.Fatalf("job start: exit %d\n%s%s", code, out, errs)
	}
	ref := JobStatus(t, a, name)
	if ref.State != api.StateSucceeded || ref.Metrics.TestAccuracy == nil || *ref.Metrics.TestAccuracy < 0.6 {
		t.Fatalf("reference: state %s, accuracy %v (want >= 0.6)", ref.State, ref.Metrics.TestAccuracy)
	}
	t.Logf("reference run: %s, accuracy %.3f", time.Since(started).Round(time.Millisecond), *ref.Metrics.TestAccuracy)
	return ref
}

// LogBuffer keeps an agent's output: written by the goroutine that copies
// the process's output while a test reads it.
type LogBuffer = logcheck.Buffer
