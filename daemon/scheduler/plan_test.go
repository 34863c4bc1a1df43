package scheduler

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gtrain/gtrain/api"
	"github.com/gtrain/gtrain/coord"
	"github.com/gtrain/gtrain/coord/schema"
	"github.com/gtrain/gtrain/jobspec"
)

var schedNow = time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)

// planSpec is a valid job of 1 pserver and trainers trainers, each asking
// for one CPU; dir is its checkpoint.dir.
func planSpec(name string, trainers int, dir string) jobspec.Spec {
	s := jobspec.Spec{Name: name, Trainers: trainers, Pservers: 1,
		Model:      jobspec.ModelSpec{Kind: "linear", Inputs: 3},
		Checkpoint: jobspec.CheckpointSpec{Dir: dir},
		Resources: jobspec.ResourcesSpec{
			Trainer: jobspec.Resource{CPU: 1, Memory: "64Mi"},
			Pserver: jobspec.Resource{CPU: 1, Memory: "64Mi"},
		}}
	s.ApplyDefaults()
	return s
}

func liveNode(name string, cpu float64) coord.ClusterNode {
	return coord.ClusterNode{Name: name, Live: true, Record: schema.NodeRecord{Name: name, Capacity: schema.Capacity{CPU: cpu, Memory: 8 * gi}}}
}

func tokens() func() string {
	n := 0
	return func() string { n++; return fmt.Sprintf("t%d", n) }
}

func updateOf(t *testing.T, updates []placementUpdate, job string) placementUpdate {
	t.Helper()
	for _, u := range updates {
		if u.job == job {
			return u
		}
	}
	t.Fatalf("no update of job %s in %+v", job, updates)
	return placementUpdate{}
}

// Jobs are placed in submit order; one that does not fit waits with a
// reason, and is placed once the job before it ended.
func TestScheduleInSubmitOrder(t *testing.T) {
	view := clusterView{
		nodes: []coord.ClusterNode{liveNode("n1", 3.2)},
		jobs: []clusterJob{
			{name: "first", fence: 10, spec: planSpec("first", 2, ""), state: api.StatePending},
			{name: "second", fence: 20, spec: planSpec("second", 1, ""), state: api.StatePending},
		},
	}
	updates := schedule(view, noneDown, schedNow, tokens())
	first, second := updateOf(t, updates, "first"), updateOf(t, updates, "second")
	if got := first.record.Nodes(); len(got) != 4 || got["trainer-1"] != "n1" || first.record.Reason != "" {
		t.Errorf("first = %+v, want all 4 workers on n1", first.record)
	}
	if first.record.Gen != 1 || first.record.Workers["master"].Gen != 1 || !slices.Equal(first.events, []string{
		"placed master on n1, pserver-0 on n1, trainer-0 on n1, trainer-1 on n1"}) {
		t.Errorf("first: gen %d, events %q", first.record.Gen, first.events)
	}
	wantReason := "needs 2.1 cpu, 192.1Mi on one node for the whole job"
	if len(second.record.Workers) != 0 || !strings.HasPrefix(second.record.Reason, wantReason) ||
		!strings.HasSuffix(second.record.Reason, "free: n1 0.1 cpu, 7.8Gi") {
		t.Errorf("second = %+v, want no worker and a reason %q... free: n1 0.1 cpu", second.record, wantReason)
	}
	view.jobs[0].placement, view.jobs[1].placement = first.record, second.record
	if again := schedule(view, noneDown, schedNow, tokens()); len(again) != 0 {
		t.Errorf("a second pass over its own result changed %+v", again)
	}
	view.jobs[0].state = api.StateSucceeded
	second = updateOf(t, schedule(view, noneDown, schedNow, tokens()), "second")
	if got := second.record.Nodes(); len(got) != 3 || second.record.Reason != "" {
		t.Errorf("second after first ended = %+v, want placed", second.record)
	}
}

// A node that is down (lease gone, or gossip says so) loses its workers to
// the other nodes; a moved worker gets a new generation, the others keep theirs.
func TestScheduleMovesWorkersOffDownNodes(t *testing.T) {
	spec := planSpec("job", 2, "/shared")
	view := clusterView{
		nodes: []coord.ClusterNode{liveNode("n1", 4), liveNode("n2", 4), liveNode("n3", 4)},
		jobs:  []clusterJob{{name: "job", fence: 5, spec: spec, state: api.StateRunning}},
	}
	placed := updateOf(t, schedule(view, noneDown, schedNow, tokens()), "job").record
	want := map[string]string{"master": "n1", "pserver-0": "n2", "trainer-0": "n3", "trainer-1": "n1"}
	if !maps.Equal(placed.Nodes(), want) {
		t.Fatalf("placement = %v, want %v", placed.Nodes(), want)
	}
	placed.Verified, placed.Check, placed.Reason = []string{"n1", "n2", "n3"}, nil, ""
	view.jobs[0].placement = placed
	for _, tc := range []struct {
		name       string
		gossipDown func(string) bool
		lease      bool
	}{
		{"lease ended", noneDown, false},
		{"gossip says dead", func(n string) bool { return n == "n2" }, true},
	} {
		view.nodes[1].Live = tc.lease
		u := updateOf(t, schedule(view, tc.gossipDown, schedNow, tokens()), "job")
		ps := u.record.Workers["pserver-0"]
		if ps.Node == "n2" || ps.Gen != 2 || u.record.Gen != 2 || u.record.Workers["master"].Gen != 1 {
			t.Errorf("%s: workers %+v gen %d; want pserver-0 off n2 at gen 2, the rest at gen 1", tc.name, u.record.Workers, u.record.Gen)
		}
		if !slices.Equal(u.events, []string{"node n2 lost: pserver-0", "pserver-0 moved from n2 (down) to " + ps.Node}) {
			t.Errorf("%s: events %q", tc.name, u.events)
		}
		if u.record.Reason != "" || u.record.Check != nil {
			t.Errorf("%s: moving to verified nodes needs no check, got reason %q check %+v", tc.name, u.record.Reason, u.record.Check)
		}
	}
}

// The storage check of checkpoint.dir: started for the nodes not verified
// yet, done when each answers ok, reported and retried when one fails.
func TestAdvanceCheck(t *testing.T) {
	states := map[string]api.NodeState{"n1": api.NodeReady, "n2": api.NodeReady, "n3": api.NodeDown}
	rec := schema.PlacementRecord{Workers: map[string]schema.Assignment{"master": {Node: "n1"}, "trainer-0": {Node: "n2"}}}
	next := tokens()
	reason := advanceCheck(&rec, "/shared", nil, states, schedNow, next)
	c := rec.Check
	if c == nil || c.Token != "t1" || !slices.Equal(c.Nodes, []string{"n1", "n2"}) || c.Dir != "/shared" ||
		reason != "verifying that checkpoint.dir /shared is storage shared by n1, n2" {
		t.Fatalf("first check = %+v, reason %q", c, reason)
	}
	ok := func(n, token string) schema.StorageResult {
		return schema.StorageResult{Token: token, Node: n, OK: true}
	}
	results := map[string]schema.StorageResult{"n1": ok("n1", "t1"), "n2": ok("n2", "t0")} // n2 answered an older check
	if reason = advanceCheck(&rec, "/shared", results, states, schedNow.Add(time.Second), next); reason !=
		"verifying that checkpoint.dir /shared is storage shared by n1, n2 (waiting for n2)" || rec.Check.Token != "t1" {
		t.Errorf("waiting: reason %q check %+v", reason, rec.Check)
	}
	results["n2"] = schema.StorageResult{Token: "t1", Node: "n2", Error: "cannot see the marker of node n1"}
	if reason = advanceCheck(&rec, "/shared", results, states, schedNow.Add(2*time.Second), next); !strings.Contains(reason,
		"checkpoint.dir /shared is not storage every node of the job can read: n2: cannot see the marker of node n1") {
		t.Errorf("failed: reason %q", reason)
	}
	if advanceCheck(&rec, "/shared", results, states, schedNow.Add(checkRetry+time.Second), next); rec.Check.Token != "t2" {
		t.Errorf("after checkRetry the check = %+v, want a new token", rec.Check)
	}
	results = map[string]schema.StorageResult{"n1": ok("n1", "t2")}
	if reason = advanceCheck(&rec, "/shared", results, states, schedNow.Add(checkRetry+checkTimeout+2*time.Second), next); rec.Check.Token != "t3" ||
		!strings.Contains(reason, "n2 did not answer within 30s") {
		t.Errorf("after checkTimeout: check %+v reason %q", rec.Check, reason)
	}
	results = map[string]schema.StorageResult{"n1": ok("n1", "t3"), "n2": ok("n2", "t3")}
	if reason = advanceCheck(&rec, "/shared", results, states, schedNow.Add(time.Minute), next); reason != "" ||
		rec.Check != nil || !slices.Equal(rec.Verified, []string{"n1", "n2"}) {
		t.Errorf("all ok: reason %q check %+v verified %v", reason, rec.Check, rec.Verified)
	}
	// A worker moves to n4: n4 checks with the live nodes, and reads the
	// marker n2 left if n2 is down by then.
	states["n4"], states["n2"] = api.NodeReady, api.NodeDown
	rec.Workers["trainer-0"] = schema.Assignment{Node: "n4"}
	advanceCheck(&rec, "/shared", results, states, schedNow.Add(time.Minute), next)
	if c := rec.Check; c == nil || !slices.Equal(c.Nodes, []string{"n1", "n4"}) || !slices.Equal(c.Refs, []string{"n2"}) {
		t.Errorf("check for a new node = %+v, want nodes n1 n4, refs n2", c)
	}
}

// noneDown is a gossip that declared no node down.
func noneDown(string) bool { return false }
