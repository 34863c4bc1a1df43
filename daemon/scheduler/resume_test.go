package scheduler

import (
	"strings"
	"testing"

	"github.com/gtrain/gtrain/api"
	"github.com/gtrain/gtrain/coord"
	"github.com/gtrain/gtrain/coord/schema"
)

// A resumed job without checkpoint.dir (coord.ReopenJob left it no worker
// and its Home) goes back to its home node only: while another job holds
// the room there it waits, saying where and why, even with room elsewhere;
// once the room is back it is placed there whole, as a new job is.
func TestScheduleResumedJobGoesHome(t *testing.T) {
	other := planSpec("other", 2, "") // master, pserver, 2 trainers: 4 cpu
	view := clusterView{nodes: []coord.ClusterNode{liveNode("n1", 8), liveNode("n2", 4.2)},
		jobs: []clusterJob{{name: "other", fence: 1, spec: other, state: api.StateRunning}}}
	view.jobs[0].placement = updateOf(t, schedule(view, noneDown, schedNow, tokens()), "other").record
	for _, a := range view.jobs[0].placement.Workers {
		if a.Node != "n1" {
			t.Fatalf("other placed on %s, want n1 (the most free cpu)", a.Node)
		}
	}
	// Move other to n2 as if it had been placed there.
	for w, a := range view.jobs[0].placement.Workers {
		a.Node = "n2"
		view.jobs[0].placement.Workers[w] = a
	}
	resumed := clusterJob{name: "resumed", fence: 2, spec: planSpec("resumed", 1, ""), state: api.StatePending,
		placement: schema.PlacementRecord{Gen: 5, Workers: map[string]schema.Assignment{}, Home: "n2"}}
	view.jobs = append(view.jobs, resumed)
	u := updateOf(t, schedule(view, noneDown, schedNow, tokens()), "resumed")
	if len(u.record.Workers) != 0 || !strings.Contains(u.record.Reason, "on n2, whose disk holds its checkpoints,") {
		t.Fatalf("resumed with n2 full = %+v, want waiting for n2", u.record)
	}
	view.jobs[0].state = api.StateSucceeded // other ends: n2's room is back
	view.jobs[1].placement = u.record
	u = updateOf(t, schedule(view, noneDown, schedNow, tokens()), "resumed")
	if len(u.record.Workers) != 3 || u.record.Reason != "" || u.record.Home != "" {
		t.Fatalf("resumed with room on n2 = %+v, want its 3 workers placed, no home left", u.record)
	}
	for w, a := range u.record.Workers {
		if a.Node != "n2" || a.Gen <= 5 {
			t.Errorf("%s placed %+v, want on n2 at a generation past 5", w, a)
		}
	}
}
