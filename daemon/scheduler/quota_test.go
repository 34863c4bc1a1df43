package scheduler

import (
	"strings"
	"testing"

	"github.com/gtrain/gtrain/api"
	"github.com/gtrain/gtrain/coord"
	"github.com/gtrain/gtrain/coord/schema"
)

func ptr[T any](v T) *T { return &v }

// overQuota names each limit a job would go over, with what it asks and
// what the user's running jobs use; no limit, or room left, says nothing.
func TestOverQuota(t *testing.T) {
	ask := Request{CPU: 4, Memory: 2 * gi, GPUs: 1}
	for _, tc := range []struct {
		name string
		q    schema.QuotaRecord
		used quotaUse
		want string
	}{
		{"no limits", schema.QuotaRecord{}, quotaUse{Request{CPU: 100}, 9}, ""},
		{"fits exactly", schema.QuotaRecord{CPU: ptr(10.0), Jobs: ptr(2)}, quotaUse{Request{CPU: 6}, 1}, ""},
		{"cpu", schema.QuotaRecord{CPU: ptr(8.0)}, quotaUse{Request{CPU: 6}, 1},
			"over quota of user alice: asks 4 cpu, 6 of 8 in use by running jobs"},
		{"memory", schema.QuotaRecord{Memory: ptr(int64(3 * gi))}, quotaUse{Request{Memory: 2 * gi}, 1},
			"over quota of user alice: asks 2Gi memory, 2Gi of 3Gi in use by running jobs"},
		{"gpus", schema.QuotaRecord{GPUs: ptr(0)}, quotaUse{}, "over quota of user alice: asks 1 gpu, 0 of 0 in use by running jobs"},
		{"jobs", schema.QuotaRecord{Jobs: ptr(2)}, quotaUse{Request{}, 2}, "over quota of user alice: 2 of 2 jobs running"},
		{"float noise", schema.QuotaRecord{CPU: ptr(4.2)}, quotaUse{Request{CPU: 0.1 + 0.2}, 1},
			"over quota of user alice: asks 4 cpu, 0.3 of 4.2 in use by running jobs"},
		{"two at once", schema.QuotaRecord{CPU: ptr(1.0), Jobs: ptr(0)}, quotaUse{},
			"over quota of user alice: asks 4 cpu, 0 of 1 in use by running jobs; 0 of 0 jobs running"},
	} {
		got := overQuota("alice", tc.q, tc.used, ask)
		if tc.want == "" && got != "" || tc.want != "" && !strings.HasPrefix(got, tc.want+"; it starts when") {
			t.Errorf("%s: got %q, want %q", tc.name, got, tc.want)
		}
	}
}

// A job that would take its owner over quota waits with the reason, while
// the same job of a user without a quota (or of no user) is placed; it is
// placed once the owner's other job ended.
func TestScheduleKeepsJobOverQuotaPending(t *testing.T) {
	job := func(name, owner string, fence int64) clusterJob {
		return clusterJob{name: name, owner: owner, fence: fence, spec: planSpec(name, 1, ""), state: api.StatePending}
	}
	view := clusterView{
		nodes:  []coord.ClusterNode{liveNode("n1", 16)},
		jobs:   []clusterJob{job("a1", "alice", 1), job("a2", "alice", 2), job("b1", "bob", 3), job("old", "", 4)},
		quotas: map[string]schema.QuotaRecord{"alice": {User: "alice", CPU: ptr(3.0)}},
	}
	updates := schedule(view, noneDown, schedNow, tokens())
	for _, name := range []string{"a1", "b1", "old"} {
		if u := updateOf(t, updates, name); len(u.record.Workers) != 3 || u.record.Reason != "" {
			t.Errorf("%s = %+v, want placed", name, u.record)
		}
	}
	a2 := updateOf(t, updates, "a2")
	want := "over quota of user alice: asks 2.1 cpu, 2.1 of 3 in use by running jobs"
	if len(a2.record.Workers) != 0 || !strings.HasPrefix(a2.record.Reason, want) {
		t.Errorf("a2 = %+v, want no worker and reason %q", a2.record, want)
	}
	for i, name := range []string{"a1", "a2", "b1", "old"} {
		view.jobs[i].placement = updateOf(t, updates, name).record
	}
	if again := schedule(view, noneDown, schedNow, tokens()); len(again) != 0 {
		t.Errorf("a second pass over its own result changed %+v", again)
	}
	view.jobs[0].state = api.StateSucceeded
	if u := updateOf(t, schedule(view, noneDown, schedNow, tokens()), "a2"); len(u.record.Workers) != 3 || u.record.Reason != "" {
		t.Errorf("a2 after a1 ended = %+v, want placed", u.record)
	}
}

// Waiting jobs are placed by priority, then in submit order: the later job
// of higher priority takes the room both want.
func TestSchedulePlacesHigherPriorityFirst(t *testing.T) {
	low, high, mid := planSpec("low", 1, ""), planSpec("high", 1, ""), planSpec("mid", 1, "")
	high.Priority, mid.Priority, low.Priority = 5, 5, -1
	view := clusterView{
		nodes: []coord.ClusterNode{liveNode("n1", 4.5)},
		jobs: []clusterJob{
			{name: "low", fence: 1, spec: low, state: api.StatePending},
			{name: "high", fence: 2, spec: high, state: api.StatePending},
			{name: "mid", fence: 3, spec: mid, state: api.StatePending},
		},
	}
	updates := schedule(view, noneDown, schedNow, tokens())
	for name, placed := range map[string]bool{"high": true, "mid": true, "low": false} {
		if u := updateOf(t, updates, name); (len(u.record.Workers) == 3) != placed {
			t.Errorf("%s = %+v, want placed %v", name, u.record, placed)
		}
	}
}
