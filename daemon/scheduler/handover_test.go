package scheduler

import (
	"maps"
	"testing"

	"github.com/gtrain/gtrain/api"
	"github.com/gtrain/gtrain/coord"
)

// A sync job's workers leave a draining node only once a global checkpoint
// completed after the drain began; async and unstarted jobs move at once.
func TestDrainHolds(t *testing.T) {
	workers := []string{"master", "pserver-0", "pserver-1", "trainer-0", "trainer-1"}
	current := map[string]string{"master": "n1", "pserver-0": "n2", "pserver-1": "n3", "trainer-0": "n2", "trainer-1": "n1"}
	drains := map[string]int64{"n2": 100}
	tests := []struct {
		name   string
		in     handoverInput
		hold   []string
		reason string
	}{
		{"sync, started, no checkpoint since the drain: its workers there wait",
			handoverInput{Workers: workers, Current: current, Drains: drains, Sync: true, Started: true, CheckpointRev: 90},
			[]string{"pserver-0", "trainer-0"},
			"waiting for a global checkpoint to hand over pserver-0, trainer-0 from draining node n2"},
		{"sync, started, never checkpointed: wait",
			handoverInput{Workers: workers, Current: current, Drains: drains, Sync: true, Started: true},
			[]string{"pserver-0", "trainer-0"},
			"waiting for a global checkpoint to hand over pserver-0, trainer-0 from draining node n2"},
		{"a checkpoint completed after the drain began: they move",
			handoverInput{Workers: workers, Current: current, Drains: drains, Sync: true, Started: true, CheckpointRev: 101},
			nil, ""},
		{"async: they move at once",
			handoverInput{Workers: workers, Current: current, Drains: drains, Started: true, CheckpointRev: 90},
			nil, ""},
		{"no master yet: they move at once",
			handoverInput{Workers: workers, Current: current, Drains: drains, Sync: true},
			nil, ""},
		{"two draining nodes, drained at different times: only the later one waits",
			handoverInput{Workers: workers, Current: current, Drains: map[string]int64{"n2": 100, "n3": 120},
				Sync: true, Started: true, CheckpointRev: 110},
			[]string{"pserver-1"},
			"waiting for a global checkpoint to hand over pserver-1 from draining node n3"},
		{"both wait: one reason per node, in node order",
			handoverInput{Workers: workers, Current: current, Drains: map[string]int64{"n3": 100, "n2": 120},
				Sync: true, Started: true, CheckpointRev: 10},
			[]string{"pserver-0", "pserver-1", "trainer-0"},
			"waiting for a global checkpoint to hand over pserver-0, trainer-0 from draining node n2; " +
				"waiting for a global checkpoint to hand over pserver-1 from draining node n3"},
		{"no draining node: nothing waits",
			handoverInput{Workers: workers, Current: current, Sync: true, Started: true},
			nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			hold, reason := drainHolds(tt.in)
			want := map[string]bool{}
			for _, w := range tt.hold {
				want[w] = true
			}
			if len(hold) != len(want) || (len(want) > 0 && !maps.Equal(hold, want)) || reason != tt.reason {
				t.Errorf("drainHolds = %v, %q; want %v, %q", hold, reason, want, tt.reason)
			}
		})
	}
}

// placeJob keeps held workers on their draining node and moves the rest;
// a hold never keeps a worker on a down node.
func TestPlaceJobHoldsOnDrainingNode(t *testing.T) {
	one := Request{CPU: 1, Memory: 512 << 20}
	w3, r3 := testWorkers(1, 1, Request{CPU: 0.1}, one, one)
	draining := nodeView{Name: "n3", State: api.NodeDraining, Free: Request{CPU: 8, Memory: 8 * gi}}
	down := nodeView{Name: "n3", State: api.NodeDown, Free: Request{CPU: 8, Memory: 8 * gi}}
	current := map[string]string{"master": "n3", "pserver-0": "n3", "trainer-0": "n1"}
	hold := map[string]bool{"pserver-0": true}
	runPlaceCases(t, []placeCase{
		{"the held pserver stays, the master moves",
			placeInput{Workers: w3, Requests: r3, Current: current, Hold: hold,
				Nodes: []nodeView{ready("n1", 4, 8*gi), ready("n2", 4, 8*gi), draining}},
			map[string]string{"master": "n2", "pserver-0": "n3", "trainer-0": "n1"}, ""},
		{"a hold on a down node keeps nothing",
			placeInput{Workers: w3, Requests: r3, Current: current, Hold: hold,
				Nodes: []nodeView{ready("n1", 4, 8*gi), ready("n2", 4, 8*gi), down}},
			map[string]string{"master": "n2", "pserver-0": "n1", "trainer-0": "n1"}, ""},
	})
}

// The scheduler's watch wakes it when a job's global checkpoint completes
// (that releases held workers), not on every checkpoint mark or master save.
func TestRelevantToSchedulerSeesGlobalCheckpoints(t *testing.T) {
	for key, want := range map[string]bool{
		coord.GlobalCheckpointKey("j"):             true,
		coord.StateKey("j"):                        true,
		coord.DrainKey("n1"):                       true,
		coord.CheckpointMarkKey("j", 10, "master"): false,
		coord.MasterMetaKey("j"):                   false,
		coord.ProgressKey("j"):                     false,
		coord.PlacementKey("j"):                    false,
	} {
		if got := relevantToScheduler(key); got != want {
			t.Errorf("relevantToScheduler(%q) = %v, want %v", key, got, want)
		}
	}
}
