package e2e

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gtrain/gtrain/internal/testing/e2erig"
	"github.com/gtrain/gtrain/internal/testing/wait"

	"github.com/gtrain/gtrain/api"
	"github.com/gtrain/gtrain/internal/testing/etcdtest"
)

// startClusterAgent starts a real `gtraind agent` named name against the
// test's etcd at endpoint, offering 4 CPUs to placement.
func startClusterAgent(t *testing.T, name, dataDir, endpoint string) *e2erig.Agent {
	t.Helper()
	return startSizedAgent(t, name, dataDir, endpoint, "4")
}

// TestClusterNodeCrash: three agents on one etcd run a sync job with 2
// pservers and 3 trainers spread over them. The node that runs pserver-1
// is crashed (its agent SIGKILLed, its children with it, never restarted):
// it shows down within 5 s and stays listed, its roles move to the other
// nodes, the job succeeds with every record applied exactly once and the
// model of an uninterrupted run.
func TestClusterNodeCrash(t *testing.T) {
	if testing.Short() {
		t.Skip("real processes, SIGKILL")
	}
	work := t.TempDir()
	e2erig.Housing(t, filepath.Join(work, "data"))
	endpoint := etcdtest.Start(t).Endpoint
	agents := map[string]*e2erig.Agent{}
	for _, n := range []string{"n1", "n2", "n3"} {
		agents[n] = startClusterAgent(t, n, filepath.Join(work, n), endpoint)
	}
	a := agents["n1"]
	if _, errs, code := a.Gctl(t, "job", "start", "-f", e2erig.WriteSpec(t, work, clusterJob("reference", work))); code != 0 {
		t.Fatalf("reference run: exit %d: %s", code, errs)
	}
	ref := e2erig.JobStatus(t, a, "reference")
	refSums := e2erig.ManifestSums(t, ref.ModelDir)

	if _, errs, code := a.Gctl(t, "job", "start", "-f", e2erig.WriteSpec(t, work, clusterJob("crash", work)), "--detach"); code != 0 {
		t.Fatalf("crash run: exit %d: %s", code, errs)
	}
	st := e2erig.WaitJob(t, a, "crash", "training to start", 90*time.Second, func(st api.JobStatus) bool {
		return st.State == api.StateRunning && st.Step > 40
	})
	victim := nodeOf(t, st, "pserver-1")
	if victim == "n1" {
		t.Fatalf("pserver-1 runs on n1, the node the test talks to: %+v", st.Pservers)
	}
	crashed := time.Now()
	t.Logf("SIGKILL the agent of %s (pid %d) at step %d", victim, agents[victim].Cmd.Process.Pid, st.Step)
	if err := agents[victim].Cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	<-agents[victim].Exited
	waitNodeState(t, a, victim, api.NodeDown, 5*time.Second)
	t.Logf("%s down %s after the crash", victim, time.Since(crashed).Round(10*time.Millisecond))

	st = e2erig.WaitJob(t, a, "crash", "the job to finish after the crash", 180*time.Second, func(st api.JobStatus) bool {
		assertNothingRunsOn(t, st, victim)
		return st.State == api.StateSucceeded
	})
	t.Logf("recovered from the crash and finished %s after it", time.Since(crashed).Round(time.Second))
	for p, n := range st.SamplesApplied {
		if n != 404 {
			t.Errorf("pass %d: samples_applied %d, want 404 (exactly once)", p, n)
		}
	}
	if len(st.SamplesApplied) != 25 {
		t.Errorf("samples_applied covers %d passes, want 25", len(st.SamplesApplied))
	}
	if sums := e2erig.ManifestSums(t, st.ModelDir); sums != refSums {
		t.Errorf("final model differs from the uninterrupted run:\n crash     %s\n reference %s", sums, refSums)
	}
	var nodes []api.NodeRow
	e2erig.JSONOf(t, a, &nodes, "node", "list")
	if len(nodes) != 3 || nodes[2].Name != "n3" || stateOf(nodes, victim) != api.NodeDown {
		t.Errorf("node list after the job: %+v; want the crashed %s still listed, down", nodes, victim)
	}
	moved := false
	for _, e := range st.Events {
		moved = moved || strings.HasPrefix(e.What, "pserver-1 moved from "+victim+" (down) to ")
	}
	if !moved {
		t.Errorf("no event says pserver-1 moved off %s", victim)
	}
	if len(e2erig.ProcessesUsing(agents[victim].DataDir)) > 0 {
		t.Errorf("processes of the crashed node survived: %v", e2erig.ProcessesUsing(agents[victim].DataDir))
	}
}

func nodeOf(t *testing.T, st api.JobStatus, worker string) string {
	t.Helper()
	for _, p := range st.Pservers {
		if p.Name == worker {
			return p.Node
		}
	}
	for _, w := range st.Trainers {
		if w.Name == worker {
			return w.Node
		}
	}
	t.Fatalf("%s not in the status: %+v", worker, st)
	return ""
}

// assertNothingRunsOn fails if the status shows a role running on node.
func assertNothingRunsOn(t *testing.T, st api.JobStatus, node string) {
	t.Helper()
	for _, p := range st.Pservers {
		if p.Node == node && p.State == api.WorkerRunning {
			t.Errorf("%s shown running on the crashed node %s", p.Name, node)
		}
	}
	for _, w := range st.Trainers {
		if w.Node == node && w.State == api.WorkerRunning {
			t.Errorf("%s shown running on the crashed node %s", w.Name, node)
		}
	}
}

func stateOf(nodes []api.NodeRow, name string) api.NodeState {
	for _, n := range nodes {
		if n.Name == name {
			return n.State
		}
	}
	return ""
}

// waitNodeState polls `gctl node list` until node is in state.
func waitNodeState(t *testing.T, a *e2erig.Agent, node string, state api.NodeState, timeout time.Duration) {
	t.Helper()
	wait.Eventually(t, timeout, fmt.Sprintf("node %s to be %s", node, state), func() (bool, string) {
		var nodes []api.NodeRow
		out, _, code := a.Gctl(t, "node", "list", "-o", "json")
		return code == 0 && e2erig.JSONUnmarshal(out, &nodes) == nil && stateOf(nodes, node) == state, out
	})
}
