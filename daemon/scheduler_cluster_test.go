package daemon

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/grpc/codes"

	"github.com/gtrain/gtrain/api"
	"github.com/gtrain/gtrain/coord/schema"
)

// A job larger than the cluster stays PENDING and says what is short and
// where; it starts once a node with room joins.
func TestPendingUntilANodeJoins(t *testing.T) {
	t.Parallel()
	endpoint := startEtcd(t)
	cli := etcdClient(t, endpoint)
	cfg := testConfig(t, "n1", endpoint)
	cfg.CPU = 1
	a := startAgent(t, cfg)
	const job = "sleep-pending"
	submitSpec(t, a, job, 2, 1, withResources(1, 1, t.TempDir()))

	var st api.JobStatus
	eventually(t, 10*time.Second, func() (bool, string) {
		st = jobStatusOf(t, a.client, job)
		return strings.HasPrefix(st.Reason, "needs "), fmt.Sprintf("state %s reason %q", st.State, st.Reason)
	})
	for _, want := range []string{"1 cpu, 16Mi for pserver (1 cpu, 16Mi each)", "2 cpu, 32Mi for 2 trainers (1 cpu, 16Mi each)", "free: n1 1 cpu"} {
		if st.State != api.StatePending || !strings.Contains(st.Reason, want) {
			t.Errorf("status %s, reason %q lacks %q", st.State, st.Reason, want)
		}
	}
	for name, w := range workerRowsOf(t, a.client, job) {
		if w.State != api.WorkerPending || w.Node != "" {
			t.Errorf("%s = %+v, want pending on no node", name, w)
		}
	}

	big := testConfig(t, "n2", endpoint)
	big.CPU = 4
	startAgent(t, big)
	recs := allInState(t, cli, job, api.WorkerRunning, "master", "pserver-0", "trainer-0", "trainer-1")
	want := map[string]string{"master": "n2", "pserver-0": "n1", "trainer-0": "n2", "trainer-1": "n2"}
	for w, node := range want {
		if recs[w].Node != node {
			t.Errorf("%s runs on %s, want %s (placed by free capacity)", w, recs[w].Node, node)
		}
	}
	if st = jobStatusOf(t, a.client, job); st.Reason != "" {
		t.Errorf("reason of the placed job = %q, want none", st.Reason)
	}
}

// A node whose agent is SIGKILLed (its children die with it) shows down
// within 5 s and stays listed; its workers are never shown running, and
// move to the live nodes. Started again, it is a fresh member and gets new
// work.
func TestKilledNodeIsDownAndItsWorkersMove(t *testing.T) {
	t.Parallel()
	endpoint := startEtcd(t)
	cli := etcdClient(t, endpoint)
	a := startAgent(t, testConfig(t, "n1", endpoint))
	b := startAgent(t, testConfig(t, "n2", endpoint))
	victim := startAgentProcess(t, testConfig(t, "n3", endpoint))
	const job = "sleep-die"
	submitSpec(t, a, job, 3, 2, withCheckpointDir(t.TempDir()))
	all := []string{"master", "pserver-0", "pserver-1", "trainer-0", "trainer-1", "trainer-2"}
	recs := allInState(t, cli, job, api.WorkerRunning, all...)
	var moved []string
	var pids []int
	for _, w := range all {
		if recs[w].Node == "n3" {
			moved, pids = append(moved, w), append(pids, recs[w].PID)
		}
	}
	if !slices.Contains(moved, "pserver-1") || !slices.Contains(moved, "trainer-1") {
		t.Fatalf("n3 runs %v, want pserver-1 and trainer-1 (spread placement): %+v", moved, recs)
	}

	killed := time.Now()
	victim.kill(t)
	eventually(t, 5*time.Second, func() (bool, string) {
		states := nodeStates(t, a.client)
		return states["n3"] == api.NodeDown, fmt.Sprintf("nodes %v", states)
	})
	t.Logf("n3 down %s after SIGKILL", time.Since(killed).Round(10*time.Millisecond))
	for _, pid := range pids {
		eventually(t, 5*time.Second, func() (bool, string) {
			return processGone(pid), fmt.Sprintf("child %d of the killed agent survived it", pid)
		})
	}
	eventually(t, 20*time.Second, func() (bool, string) {
		rows := workerRowsOf(t, a.client, job)
		for _, w := range rows {
			if w.Node == "n3" && w.State == api.WorkerRunning {
				t.Fatalf("%s shown running on down node n3: %+v", w.Name, w)
			}
		}
		for _, w := range moved {
			if r := rows[w]; r.State != api.WorkerRunning || r.Node == "n3" {
				return false, fmt.Sprintf("workers %+v", rows)
			}
		}
		return true, ""
	})
	if states := nodeStates(t, a.client); states["n3"] != api.NodeDown || len(states) != 3 {
		t.Errorf("nodes after re-placement = %v, want n3 still listed, down", states)
	}
	evs := strings.Join(events(t, cli, job), "\n")
	if !strings.Contains(evs, "pserver-1 moved from n3 (down) to ") {
		t.Errorf("events lack the move of pserver-1:\n%s", evs)
	}

	startAgentProcess(t, testConfig(t, "n3", endpoint))
	// Each agent's gossip re-admits n3 on its own, and the scheduler (on n1
	// or n2) places on its own agent's view: wait until both see n3 ready,
	// or a job submitted in between is rightly placed without it.
	for _, peer := range []*testAgent{a, b} {
		eventually(t, 30*time.Second, func() (bool, string) {
			states := nodeStates(t, peer.client)
			return states["n3"] == api.NodeReady, fmt.Sprintf("nodes seen by %s: %v", peer.cfg.NodeName, states)
		})
	}
	const next = "sleep-next"
	submitSpec(t, a, next, 3, 1, withCheckpointDir(t.TempDir()))
	recs = allInState(t, cli, next, api.WorkerRunning, "master", "pserver-0", "trainer-0", "trainer-1", "trainer-2")
	var onN3 []string
	for w, r := range recs {
		if r.Node == "n3" {
			onN3 = append(onN3, w)
		}
	}
	if len(onN3) == 0 {
		t.Errorf("the node that came back got no work: %+v", recs)
	}
}

// Drain moves a node's workers to the others and keeps new ones away;
// undrain makes it take work again.
func TestDrainAndUndrain(t *testing.T) {
	t.Parallel()
	endpoint := startEtcd(t)
	cli := etcdClient(t, endpoint)
	a := startAgent(t, testConfig(t, "n1", endpoint))
	startAgent(t, testConfig(t, "n2", endpoint))
	const job = "sleep-drain"
	submitSpec(t, a, job, 2, 1, withCheckpointDir(t.TempDir()))
	allInState(t, cli, job, api.WorkerRunning, "master", "pserver-0", "trainer-0", "trainer-1")
	ctx := context.Background()

	var row api.NodeRow
	getDoc(t, "drain", func() (*api.Document, error) { return a.client.DrainNode(ctx, &api.NodeRequest{Name: "n2"}) }, &row)
	if row.Name != "n2" || row.State != api.NodeDraining {
		t.Errorf("drain answered %+v, want n2 draining", row)
	}
	recs := allOn(t, cli, job, "n1", "master", "pserver-0", "trainer-0", "trainer-1")
	if st := nodeStates(t, a.client); st["n2"] != api.NodeDraining {
		t.Errorf("nodes after drain = %v, want n2 draining", st)
	}
	if restarts := recs["pserver-0"].Restarts; restarts != 0 {
		t.Errorf("a move counted as a crash: pserver-0 restarts %d", restarts)
	}
	const other = "sleep-other"
	submitSpec(t, a, other, 2, 1, withCheckpointDir(t.TempDir()))
	allOn(t, cli, other, "n1", "master", "pserver-0", "trainer-0", "trainer-1")

	getDoc(t, "undrain", func() (*api.Document, error) { return a.client.UndrainNode(ctx, &api.NodeRequest{Name: "n2"}) }, &row)
	if row.State != api.NodeReady {
		t.Errorf("undrain answered %+v, want n2 ready", row)
	}
	const third = "sleep-third"
	submitSpec(t, a, third, 2, 1, withCheckpointDir(t.TempDir()))
	recs = allInState(t, cli, third, api.WorkerRunning, "master", "pserver-0", "trainer-0", "trainer-1")
	if recs["master"].Node != "n2" || recs["trainer-0"].Node != "n2" {
		t.Errorf("after undrain the new job runs %+v; want its master and trainer-0 on n2, the node with more free CPU", recs)
	}
	_, err := a.client.DrainNode(ctx, &api.NodeRequest{Name: "nope"})
	assertStatus(t, "drain an unknown node", err, codes.NotFound, "node nope not found; see gctl node list")
}

// processGone reports whether pid has exited (a zombie that nobody reaped
// yet has exited too).
func processGone(pid int) bool {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	return errors.Is(err, fs.ErrNotExist) || (err == nil && strings.Contains(string(stat), ") Z "))
}

// allOn waits until every named worker of job runs on node.
func allOn(t *testing.T, cli *clientv3.Client, job, node string, names ...string) map[string]schema.WorkerRecord {
	t.Helper()
	var recs map[string]schema.WorkerRecord
	eventually(t, 20*time.Second, func() (bool, string) {
		recs = workers(t, cli, job)
		for _, n := range names {
			if recs[n].State != api.WorkerRunning || recs[n].Node != node {
				return false, fmt.Sprintf("job %s: want %v running on %s, records %+v", job, names, node, recs)
			}
		}
		return true, ""
	})
	return recs
}
