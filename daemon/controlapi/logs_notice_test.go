package controlapi

import (
	"testing"

	"github.com/gtrain/gtrain/api"
	"github.com/gtrain/gtrain/coord"
	"github.com/gtrain/gtrain/coord/schema"
)

// The notice of a worker that is not placed says why, as the scheduler
// put it, and never that it may still run once the job has ended.
func TestNotPlacedNotice(t *testing.T) {
	t.Parallel()
	const reason = "needs 2 cpu for trainer (2 cpu each); free: n1 1 cpu"
	for _, c := range []struct {
		state     api.JobState
		placement *schema.PlacementRecord
		want      string
	}{
		{api.StatePending, nil, "trainer-1 is not placed yet: waiting for the scheduler to place it"},
		{api.StatePending, &schema.PlacementRecord{Reason: reason}, "trainer-1 is not placed yet: " + reason},
		{api.StateRunning, &schema.PlacementRecord{}, "trainer-1 is not placed yet: waiting for the scheduler to place it"},
		{api.StateStopped, &schema.PlacementRecord{Reason: reason}, "trainer-1 has no log: the job ended before it was placed (" + reason + ")"},
		{api.StateFailed, nil, "trainer-1 has no log: the job ended before it was placed"},
	} {
		snap := &jobSnapshot{JobView: &coord.JobView{Name: "j", State: schema.StateRecord{State: c.state}, Placement: c.placement}}
		if got := notPlacedNotice(snap, "trainer-1"); got != c.want {
			t.Errorf("%s, placement %+v: %q, want %q", c.state, c.placement, got, c.want)
		}
	}
}
