package scheduler

import (
	"slices"
	"strings"
	"testing"

	"github.com/gtrain/gtrain/api"
	"github.com/gtrain/gtrain/coord"
)

// preemptView is node n1 of 4.2 CPUs running job low (master, pserver and
// trainers 2 of min lowMin, 3.1 CPUs; its checkpoint.dir dir), and job
// high of priority highPriority (2.1 CPUs) submitted after it.
func preemptView(t *testing.T, lowMin, highPriority int, dir ...string) clusterView {
	t.Helper()
	low := planSpec("low", 2, strings.Join(dir, ""))
	low.TrainersMin, low.TrainersMax = lowMin, 2
	view := clusterView{nodes: []coord.ClusterNode{liveNode("n1", 4.2)},
		jobs: []clusterJob{{name: "low", fence: 1, spec: low, state: api.StateRunning}}}
	view.jobs[0].placement = updateOf(t, schedule(view, noneDown, schedNow, tokens()), "low").record
	high := planSpec("high", 1, "")
	high.Priority = highPriority
	view.jobs = append(view.jobs, clusterJob{name: "high", fence: 2, spec: high, state: api.StatePending})
	return view
}

// A job of higher priority that does not fit shrinks a running elastic job
// toward its min (its highest trainer first), saying why on both, and is
// placed on the next pass in the room freed; the shrunk job keeps the rest.
func TestSchedulePreemptsByShrinkingElasticJob(t *testing.T) {
	view := preemptView(t, 1, 5)
	updates := schedule(view, noneDown, schedNow, tokens())
	low, high := updateOf(t, updates, "low"), updateOf(t, updates, "high")
	if _, ok := low.record.Workers["trainer-1"]; ok || len(low.record.Workers) != 3 || low.record.Gen != view.jobs[0].placement.Gen+1 {
		t.Errorf("low = %+v, want trainer-1 unplaced, 3 workers kept, a new gen", low.record)
	}
	if len(low.events) != 1 || !strings.HasPrefix(low.events[0], "stopped trainer-1: shrunk to 1 trainers (min 1) for higher priority: job high (priority 5)") {
		t.Errorf("low events %q", low.events)
	}
	want := "waits for room: shrinking lower-priority elastic jobs toward their min: low (trainer-1)"
	if len(high.record.Workers) != 0 || high.record.Reason != want || len(high.events) != 1 || high.events[0] != want {
		t.Errorf("high = %+v events %q, want no worker and reason %q", high.record, high.events, want)
	}
	view.jobs[0].placement, view.jobs[1].placement = low.record, high.record
	updates = schedule(view, noneDown, schedNow, tokens())
	if h := updateOf(t, updates, "high"); len(h.record.Workers) != 3 || h.record.Reason != "" {
		t.Errorf("high on the next pass = %+v, want placed", h.record)
	}
	for _, u := range updates {
		if u.job == "low" && (len(u.record.Workers) != 3 || len(u.events) != 0) {
			t.Errorf("low on the next pass = %+v %q, want its 3 workers, trainer-1 waiting", u.record, u.events)
		}
	}
}

// No shrink for a job of the same priority, nor below a job's min: the
// job waits with the usual reason and nothing running changes.
func TestScheduleNeverShrinksBelowMinOrEqualPriority(t *testing.T) {
	for _, tc := range []struct {
		name                 string
		lowMin, highPriority int
	}{{"at its min", 2, 5}, {"same priority", 1, 0}} {
		view := preemptView(t, tc.lowMin, tc.highPriority)
		updates := schedule(view, noneDown, schedNow, tokens())
		for _, u := range updates {
			if u.job == "low" {
				t.Errorf("%s: low changed: %+v", tc.name, u.record)
			}
		}
		if h := updateOf(t, updates, "high"); len(h.record.Workers) != 0 || !strings.HasPrefix(h.record.Reason, "needs 2.1 cpu") {
			t.Errorf("%s: high = %+v, want waiting for cpu", tc.name, h.record)
		}
	}
}

// A sync job that has started gives its trainers up at its next global
// checkpoint: the first pass records the yield (and says so), passes
// without a new checkpoint change nothing, and the first after one
// unplaces them.
// With a shared checkpoint.dir too, where placement does not keep a
// missing worker on its node by itself: the yielding trainer stays placed.
func TestSchedulePreemptionWaitsForGlobalCheckpoint(t *testing.T) {
	for _, dir := range []string{"", "/shared/ckpt"} {
		t.Run("checkpoint.dir="+dir, func(t *testing.T) { preemptionWaitsForGlobalCheckpoint(t, dir) })
	}
}

func preemptionWaitsForGlobalCheckpoint(t *testing.T, dir string) {
	view := preemptView(t, 1, 5, dir)
	view.jobs[0].started, view.jobs[0].checkpointRev = true, 7
	updates := schedule(view, noneDown, schedNow, tokens())
	low, high := updateOf(t, updates, "low"), updateOf(t, updates, "high")
	y := low.record.Yield
	if len(low.record.Workers) != 4 || y == nil || y.After != 7 || !slices.Equal(y.Trainers, []string{"trainer-1"}) {
		t.Fatalf("low = %+v (yield %+v), want its 4 workers and trainer-1 yielding after rev 7", low.record, y)
	}
	if !slices.Equal(low.events, []string{"trainer-1 will stop at the next global checkpoint for higher priority: job high (priority 5) does not fit"}) {
		t.Errorf("low events %q", low.events)
	}
	view.jobs[0].placement, view.jobs[1].placement = low.record, high.record
	if again := schedule(view, noneDown, schedNow, tokens()); len(again) != 0 {
		t.Errorf("a pass without a new global checkpoint changed %+v", again)
	}
	view.jobs[0].checkpointRev = 9
	low = updateOf(t, schedule(view, noneDown, schedNow, tokens()), "low")
	if _, ok := low.record.Workers["trainer-1"]; ok || low.record.Yield != nil || len(low.events) != 1 ||
		!strings.HasPrefix(low.events[0], "stopped trainer-1: shrunk to 1 trainers (min 1)") {
		t.Errorf("low after the checkpoint = %+v events %q, want trainer-1 unplaced, no yield left", low.record, low.events)
	}
}
