package scheduler

import (
	"slices"
	"testing"

	"github.com/gtrain/gtrain/api"
	"github.com/gtrain/gtrain/coord"
)

// A down node's roles are named once, in one event per node: when they
// move away, or when a job bound to the node (no checkpoint.dir) starts
// waiting for it; a later pass over the same placement says nothing again.
func TestScheduleSaysWhichRolesANodeTookWithIt(t *testing.T) {
	cases := []struct {
		name string
		dir  string // the job's checkpoint.dir
		want string
	}{
		{"roles move to another node", "/shared", "node n1 lost: master, trainer-1"},
		{"the job waits for its node", "", "node n1 lost: master, pserver-0, trainer-0, trainer-1"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			view := clusterView{
				nodes: []coord.ClusterNode{liveNode("n1", 4), liveNode("n2", 4), liveNode("n3", 4)},
				jobs:  []clusterJob{{name: "job", fence: 5, spec: planSpec("job", 2, tc.dir), state: api.StateRunning}},
			}
			placed := updateOf(t, schedule(view, noneDown, schedNow, tokens()), "job").record
			placed.Verified, placed.Check, placed.Reason = []string{"n1", "n2", "n3"}, nil, ""
			view.jobs[0].placement = placed
			view.nodes[0].Live = false
			u := updateOf(t, schedule(view, noneDown, schedNow, tokens()), "job")
			if len(u.events) == 0 || u.events[0] != tc.want {
				t.Fatalf("events %q, want first %q", u.events, tc.want)
			}
			view.jobs[0].placement = u.record
			for _, again := range schedule(view, noneDown, schedNow, tokens()) {
				if slices.Contains(again.events, tc.want) {
					t.Fatalf("the loss was told again: %q", again.events)
				}
			}
		})
	}
}
