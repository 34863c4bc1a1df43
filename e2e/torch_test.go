package e2e

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gtrain/gtrain/api"
	"github.com/gtrain/gtrain/internal/testing/e2erig"
)

// TestTorchCNN: the PyTorch CNN trains Fashion-MNIST records with 2
// trainers through shared memory; a second run whose trainer-1 loses its
// Python process to SIGKILL (as from the OOM killer) restarts that trainer,
// counts the crash against the budget, and ends with the uninterrupted
// run's model bit for bit.
func TestTorchCNN(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real processes")
	}
	a, work := programSetup(t)
	ref := a.ReferenceRun(t, work, "cnn-ref", torchCNNJob("cnn-ref"))
	logs, err := os.ReadFile(filepath.Join(a.DataDir, "jobs", "cnn-ref", "log", "trainer-0.log"))
	if err != nil || !strings.Contains(string(logs), "shared_memory=true") {
		t.Errorf("trainer-0 does not say its program took shared memory (%v):\n%s", err, logs)
	}

	e2erig.StartDetached(t, a, torchCNNJob("cnn-kill"))
	st := e2erig.WaitJob(t, a, "cnn-kill", "training to start", 60*time.Second, func(st api.JobStatus) bool {
		return st.State == api.StateRunning && st.Step > 3 // training, and far from the end (status lags ~12 steps)
	})
	py := childRunning(t, a.PIDOf(t, "cnn-kill", "trainer-1"), "torch_cnn.py")
	t.Logf("SIGKILL trainer-1's program (pid %d) at step %d of about %d", py, st.Step, refSteps(ref))
	if err := syscall.Kill(py, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	st = e2erig.WaitJob(t, a, "cnn-kill", "the job to finish", 120*time.Second, func(st api.JobStatus) bool { return st.State == api.StateSucceeded })
	checkProgramCrash(t, st, "trainer-1")
	for p, n := range st.SamplesApplied {
		if n != ref.SamplesApplied[p] {
			t.Errorf("pass %d: %d samples applied, reference %d", p, n, ref.SamplesApplied[p])
		}
	}
	if sums, want := e2erig.ManifestSums(t, st.ModelDir), e2erig.ManifestSums(t, ref.ModelDir); sums != want {
		t.Errorf("the model differs from the uninterrupted run:\n killed    %s\n reference %s", sums, want)
	}
}

// refSteps is how many steps the reference run took (for the log: a kill
// must land well before the end).
func refSteps(ref api.JobStatus) int64 { return ref.Step }

// checkProgramCrash: worker restarted once, the restart counted against the
// crash budget, and an event says its program died by a signal.
func checkProgramCrash(t *testing.T, st api.JobStatus, worker string) {
	t.Helper()
	for _, w := range st.Trainers {
		if w.Name == worker && (w.Restarts != 1 || w.BudgetUsed != 1) {
			t.Errorf("%s: %d restarts, %d of the budget used; want 1 and 1", worker, w.Restarts, w.BudgetUsed)
		}
	}
	found := false
	for _, e := range st.Events {
		found = found || (strings.Contains(e.What, worker) && strings.Contains(e.What, "signal: killed") &&
			strings.Contains(e.What, "counted against the crash budget"))
	}
	if !found {
		t.Errorf("no event says %s's program was killed: %+v", worker, st.Events)
	}
}

// childRunning is the PID of the child of parent whose command line has
// word.
func childRunning(t *testing.T, parent int, word string) int {
	t.Helper()
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// The fields after the command name (in parentheses): state, ppid.
		fields := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
		cmdline, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if len(fields) > 1 && fields[1] == strconv.Itoa(parent) && strings.Contains(string(cmdline), word) {
			return pid
		}
	}
	t.Fatalf("no child of %d runs %s", parent, word)
	return 0
}
