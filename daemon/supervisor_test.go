package daemon

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/gtrain/gtrain/api"
	"github.com/gtrain/gtrain/coord"
	"github.com/gtrain/gtrain/coord/schema"
	"github.com/gtrain/gtrain/internal/jobdir"
)

// A trainer that exits because it lost etcd or its master is restarted as
// often as that happens, and none of it counts against the crash budget.
func TestSupervisorDoesNotCountLostContact(t *testing.T) {
	t.Parallel()
	endpoint := startEtcd(t)
	cli := etcdClient(t, endpoint)
	a := startAgent(t, testConfig(t, "n1", endpoint))
	const job = "lost-contact"
	submitSpec(t, a, job, 1, 1, func(m map[string]any) { m["restarts"] = map[string]any{"limit": 2, "window": "1m"} })
	var rec schema.WorkerRecord
	eventually(t, 30*time.Second, func() (bool, string) {
		rec = workers(t, cli, job)["trainer-0"]
		return rec.State == api.WorkerRunning && rec.Restarts == 4, fmt.Sprintf("trainer-0 record %+v", rec)
	})
	if st, _ := coord.JobState(context.Background(), cli, job); st.State == api.StateFailed {
		t.Errorf("job FAILED (%s): exits after lost contact spent the budget", st.Reason)
	}
	if len(rec.Crashes) != 0 {
		t.Errorf("trainer-0 counted crashes %v, want none", rec.Crashes)
	}
	want := "trainer-0 lost etcd or its master (exit status 75); restarting (restart 4, not counted against the crash budget)"
	if evs := events(t, cli, job); !slices.Contains(evs, want) {
		t.Errorf("events %q lack %q", evs, want)
	}
}

// A crashing trainer is restarted and counted; when it spends the restart
// budget the job fails with a reason naming it, and the job's other
// children are then stopped.
func TestSupervisorRestartsUntilBudgetFailsJob(t *testing.T) {
	t.Parallel()
	endpoint := startEtcd(t)
	cli := etcdClient(t, endpoint)
	cfg := testConfig(t, "n1", endpoint)
	a := startAgent(t, cfg)
	const job = "mixed-budget"
	submitSpec(t, a, job, 1, 1, func(m map[string]any) { m["restarts"] = map[string]any{"limit": 2, "window": "1m"} })

	var st schema.StateRecord
	eventually(t, 20*time.Second, func() (bool, string) {
		st, _ = coord.JobState(context.Background(), cli, job)
		return st.State == api.StateFailed, "job state " + string(st.State)
	})
	// The reason quotes the cause from the role's log, not only the count.
	wantReason := "trainer-0 crashed 3 times in 1m0s: exit status 3; its last error: \"gtraind: crashing on purpose\"; see `gctl job logs mixed-budget -w trainer-0`"
	if st.Reason != wantReason {
		t.Errorf("reason = %q, want %q", st.Reason, wantReason)
	}
	recs := allInState(t, cli, job, api.WorkerStopped, "master", "pserver-0")
	if tr := recs["trainer-0"]; tr.State != api.WorkerFailed || tr.Restarts != 2 || tr.ExitCode != 3 {
		t.Errorf("trainer-0 record = %+v, want failed after 2 restarts with exit code 3", tr)
	}
	evs := events(t, cli, job)
	for _, want := range []string{
		"trainer-0 exited (exit status 3); restarting (restart 1)",
		"trainer-0 exited (exit status 3); restarting (restart 2)",
		wantReason,
	} {
		if !slices.Contains(evs, want) {
			t.Errorf("events %q lack %q", evs, want)
		}
	}
	log := readLog(t, cfg, job, "trainer-0")
	for _, want := range []string{"(attempt 1)", "(attempt 2)", "(attempt 3)", "crashing on purpose"} {
		if !strings.Contains(log, want) {
			t.Errorf("trainer-0 log lacks %q:\n%s", want, log)
		}
	}
	if n := countOf(log, "=== gtraind: starting trainer-0"); n != 3 {
		t.Errorf("trainer-0 started %d times, want 3", n)
	}
	// The sleeping master got StopGrace, then SIGTERM, and said goodbye.
	if log := readLog(t, cfg, job, "master"); !strings.Contains(log, "got SIGTERM") {
		t.Errorf("master log lacks its SIGTERM:\n%s", log)
	}
	if recs["master"].PID != 0 {
		t.Errorf("stopped master still has a PID: %+v", recs["master"])
	}
}

// A role that exits 0 finished its work and is not started again.
func TestSupervisorDoesNotRestartCleanExit(t *testing.T) {
	t.Parallel()
	endpoint := startEtcd(t)
	cli := etcdClient(t, endpoint)
	cfg := testConfig(t, "n1", endpoint)
	a := startAgent(t, cfg)
	const job = "ok-done"
	submit(t, a, job, 2, 1)
	recs := allInState(t, cli, job, api.WorkerExited, "master", "pserver-0", "trainer-0", "trainer-1")
	for name, r := range recs {
		if r.Restarts != 0 || r.ExitCode != 0 || r.Node != "n1" || r.Start.IsZero() {
			t.Errorf("%s record = %+v, want exited once on n1", name, r)
		}
	}
	time.Sleep(500 * time.Millisecond) // longer than the first restart backoff
	if log := readLog(t, cfg, job, "trainer-1"); countOf(log, "=== gtraind: starting") != 1 || !strings.Contains(log, "trainer 1 of ok-done") {
		t.Errorf("trainer-1 log, want one start with --index 1:\n%s", log)
	}
	if st, _ := coord.JobState(context.Background(), cli, job); st.State != api.StatePending {
		t.Errorf("job state = %+v, want it untouched (PENDING)", st)
	}
}

// Stopping the agent stops every child, even one that ignores SIGTERM,
// and deregisters the node; a new agent with the same name picks the job
// up again.
func TestAgentStopLeavesNoChildAndRestartPicksUp(t *testing.T) {
	t.Parallel()
	endpoint := startEtcd(t)
	cli := etcdClient(t, endpoint)
	cfg := testConfig(t, "n1", endpoint)
	a := startAgent(t, cfg)
	const job = "stubborn-stop"
	submit(t, a, job, 1, 1)
	names := []string{"master", "pserver-0", "trainer-0"}
	recs := allInState(t, cli, job, api.WorkerRunning, names...)
	var pids []int
	for _, n := range names {
		pids = append(pids, recs[n].PID)
		if err := syscall.Kill(recs[n].PID, 0); err != nil {
			t.Fatalf("%s pid %d not alive while running: %v", n, recs[n].PID, err)
		}
	}
	// Give the children time to install their SIGTERM handler.
	eventually(t, 10*time.Second, func() (bool, string) {
		log := readLog(t, cfg, job, "trainer-0")
		return strings.Contains(log, "ignoring SIGTERM"), "trainer-0 log: " + log
	})

	a.stop(t)
	for i, pid := range pids {
		if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
			t.Errorf("%s (pid %d) survived the agent: kill(0) = %v", names[i], pid, err)
		}
	}
	recs = workers(t, cli, job)
	for _, n := range names {
		if recs[n].State != api.WorkerStopped {
			t.Errorf("%s record after agent stop = %+v, want stopped", n, recs[n])
		}
	}
	if _, err := coord.GetJSON(context.Background(), cli, coord.NodeKey("n1"), &schema.NodeRecord{}); !errors.Is(err, coord.ErrNotFound) {
		t.Errorf("node record after stop: %v, want it deleted", err)
	}

	startAgent(t, cfg) // the same node comes back
	recs = allInState(t, cli, job, api.WorkerRunning, names...)
	for _, n := range names {
		if slices.Contains(pids, recs[n].PID) {
			t.Errorf("%s runs with an old pid %d", n, recs[n].PID)
		}
	}
	if log := readLog(t, cfg, job, "master"); countOf(log, "=== gtraind: starting master") != 2 {
		t.Errorf("master log, want two starts:\n%s", log)
	}
}

// A job stopped by the operator stops its children; purging it removes
// its directory and lets the name be used again.
func TestStopAndPurge(t *testing.T) {
	t.Parallel()
	endpoint := startEtcd(t)
	cli := etcdClient(t, endpoint)
	cfg := testConfig(t, "n1", endpoint)
	a := startAgent(t, cfg)
	const job = "sleep-purge"
	submit(t, a, job, 1, 1)
	names := []string{"master", "pserver-0", "trainer-0"}
	recs := allInState(t, cli, job, api.WorkerRunning, names...)

	resp, err := a.client.StopJob(context.Background(), &api.StopJobRequest{Name: job})
	if err != nil {
		t.Fatal(err)
	}
	if api.JobState(resp.State) != api.StateStopped || !slices.Equal(resp.Stopped, names) {
		t.Errorf("stop = %v %v, want STOPPED %v", resp.State, resp.Stopped, names)
	}
	allInState(t, cli, job, api.WorkerStopped, names...)
	for _, n := range names {
		if err := syscall.Kill(recs[n].PID, 0); !errors.Is(err, syscall.ESRCH) {
			t.Errorf("%s (pid %d) survived its job: %v", n, recs[n].PID, err)
		}
	}
	if _, err := os.Stat(jobdir.Root(cfg.DataDir, job)); err != nil {
		t.Fatalf("job dir of a stopped (not purged) job: %v", err)
	}

	resp, err = a.client.StopJob(context.Background(), &api.StopJobRequest{Name: job, Purge: true})
	if err != nil {
		t.Fatal(err)
	}
	if api.JobState(resp.State) != api.StateStopped || len(resp.Stopped) != 0 {
		t.Errorf("purge = %v %v, want STOPPED and nothing left to stop", resp.State, resp.Stopped)
	}
	eventually(t, 10*time.Second, func() (bool, string) {
		_, err := os.Stat(jobdir.Root(cfg.DataDir, job))
		return errors.Is(err, os.ErrNotExist), "job dir after purge: " + errString(err)
	})
	kvs, err := cli.Get(context.Background(), coord.JobPrefix(job), clientv3.WithPrefix())
	if err != nil || kvs.Count != 0 {
		t.Errorf("keys left after purge: %d (%v)", kvs.Count, err)
	}
	// The name is free again, and the new job runs.
	submit(t, a, job, 1, 1)
	allInState(t, cli, job, api.WorkerRunning, names...)
}

func errString(err error) string {
	if err == nil {
		return "exists"
	}
	return err.Error()
}
