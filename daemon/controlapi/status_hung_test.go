package controlapi

import (
	"testing"
	"time"

	"github.com/gtrain/gtrain/api"
	"github.com/gtrain/gtrain/coord"
	"github.com/gtrain/gtrain/coord/schema"
)

// A hung record shows its worker as hung, with the reason, only while it
// names the process that runs now; once the job ended a live process is
// exiting, hung or not.
func TestStatusShowsHungWorkers(t *testing.T) {
	for _, tc := range []struct {
		name    string
		rec     schema.HungRecord
		state   api.JobState
		want    api.WorkerState
		trainer api.WorkerState // trainer-0's record says restarting
	}{
		{"the running process", schema.HungRecord{PID: 43, Reason: "pserver-1 has not answered a health probe for 5s"}, api.StateRunning, api.WorkerHung, api.WorkerRestarting},
		{"an earlier process", schema.HungRecord{PID: 42, Reason: "old"}, api.StateRunning, api.WorkerRunning, api.WorkerRestarting},
		{"the job ended", schema.HungRecord{PID: 43, Reason: "late"}, api.StateSucceeded, api.WorkerExiting, api.WorkerExiting},
	} {
		t.Run(tc.name, func(t *testing.T) {
			kvs := append(testJobKVs(t, tc.state, nil, 0), kv(t, coord.HungKey("fit", "pserver-1"), tc.rec),
				kv(t, coord.HungKey("fit", "trainer-0"), schema.HungRecord{PID: 44, Reason: "restarting, not hung"}))
			snap := snapshotOf(t, kvs)
			st := jobStatus(snap, noneDown, time.Now())
			p := st.Pservers[1]
			wantReason := ""
			if tc.want == api.WorkerHung {
				wantReason = tc.rec.Reason
			}
			if p.State != tc.want || p.Reason != wantReason {
				t.Errorf("pserver-1: state %s reason %q, want %s %q", p.State, p.Reason, tc.want, wantReason)
			}
			if tr := st.Trainers[0]; tr.State != tc.trainer || tr.Reason != "" {
				t.Errorf("trainer-0 (restarting, PID of its record): state %s reason %q, want %s", tr.State, tr.Reason, tc.trainer)
			}
			rows := workerRows(snap, noneDown)
			for _, r := range rows {
				if r.Name == "pserver-1" && r.State != tc.want {
					t.Errorf("workers row of pserver-1: %s, want %s", r.State, tc.want)
				}
			}
		})
	}
}
