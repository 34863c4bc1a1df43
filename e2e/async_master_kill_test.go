package e2e

import (
	"fmt"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/gtrain/gtrain/api"
	"github.com/gtrain/gtrain/dataset"
	"github.com/gtrain/gtrain/internal/testing/e2erig"
)

// TestAsyncMasterKilledWhileDispatching: an async job whose master is
// SIGKILLed three times while the trainers take tasks as fast as they can,
// so a kill often falls between the etcd commit of a report and dispatch
// and the answer to the trainer. The trainers retry on the next master: the
// job succeeds, no task failed, and, as the README documents for this case,
// every pass counts each record exactly once (a repeated report is not
// counted again; the dispatch never heard goes out again).
func TestAsyncMasterKilledWhileDispatching(t *testing.T) {
	if testing.Short() {
		t.Skip("e2e: real processes, SIGKILL")
	}
	const passes = 150
	a, res, st := startAsyncJob(t, "mkill", passes, 1)
	for kill := range 3 {
		from := st.Pass
		st = e2erig.WaitJob(t, a, "mkill", "progress", 60*time.Second, func(st api.JobStatus) bool {
			return st.State == api.StateRunning && st.Pass >= from+10
		})
		pid := a.PIDOf(t, "mkill", "master")
		t.Logf("SIGKILL %d: the master (pid %d) at pass %d", kill+1, pid, st.Pass)
		if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		if st.Pass >= passes-15 {
			t.Fatalf("the job is about to end before kill %d; make it longer", kill+1)
		}
	}
	st = e2erig.WaitJob(t, a, "mkill", "the job to succeed", 90*time.Second, func(st api.JobStatus) bool {
		return st.State == api.StateSucceeded
	})
	e2erig.AssertEachRecordOnce(t, st, passes, res.TrainRecords)
}

// startAsyncJob starts an agent over the housing data and on it the async
// job name of passes, and waits until the job runs pass from.
func startAsyncJob(t *testing.T, name string, passes, from int) (*e2erig.Agent, *dataset.ConvertResult, api.JobStatus) {
	t.Helper()
	work := t.TempDir()
	res := e2erig.Housing(t, filepath.Join(work, "data"))
	a := e2erig.StartAgent(t, filepath.Join(work, "agent"))
	e2erig.StartDetached(t, a, e2erig.AsyncJob(name, passes))
	st := e2erig.WaitJob(t, a, name, fmt.Sprintf("training to reach pass %d", from), 60*time.Second, func(st api.JobStatus) bool {
		return st.State == api.StateRunning && st.Pass >= from
	})
	return a, res, st
}
