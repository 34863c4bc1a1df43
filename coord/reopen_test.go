package coord

import (
	"context"
	"errors"
	"testing"

	"github.com/gtrain/gtrain/api"
	"github.com/gtrain/gtrain/coord/schema"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// TestReopenJob: the job goes back to PENDING with the record as decide
// left it, its worker records gone and its workers unplaced (its home node
// kept: it has no checkpoint.dir); the master's state and the global
// checkpoint stay. A refusal changes nothing.
func TestReopenJob(t *testing.T) {
	cli := dialTest(t)
	ctx := t.Context()
	job := uniqueJob(t)
	rec := schema.JobRecord{}
	rec.Spec.Name, rec.Spec.Passes = job, 3
	global := schema.GlobalCheckpoint{Step: 50, Pass: 1, Steps: []int64{25, 50}}
	for key, v := range map[string]any{JobKey(job): rec, StateKey(job): schema.StateRecord{State: api.StateStopped},
		GlobalCheckpointKey(job): global, WorkerKey(job, "master"): schema.WorkerRecord{Name: "master", State: api.WorkerExited},
		PlacementKey(job): schema.PlacementRecord{Gen: 3, Workers: map[string]schema.Assignment{
			"master": {Node: "n2", Gen: 1}, "trainer-0": {Node: "n2", Gen: 3, GPUs: []int{1}}}},
		MasterMetaKey(job): map[string]int{"step": 70}} {
		if err := PutJSON(ctx, cli, key, v); err != nil {
			t.Fatal(err)
		}
	}
	refused := errors.New("no")
	if _, err := ReopenJob(ctx, cli, job, func(r *Reopened) error { r.Record.Spec.Passes = 9; return refused }); err != refused {
		t.Fatalf("refused reopen: %v, want the decision's error as is", err)
	}
	assertState(t, ctx, cli, job, api.StateStopped)

	got, err := ReopenJob(ctx, cli, job, func(r *Reopened) error {
		if r.State.State != api.StateStopped || r.Global.Step != 50 || r.Record.Spec.Passes != 3 {
			t.Errorf("decide saw %+v", r)
		}
		r.Record.Spec.Passes = 5
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if got.Global.Step != 50 || got.State.State != api.StateStopped {
		t.Errorf("ReopenJob answered %+v, want what it read", got)
	}
	assertState(t, ctx, cli, job, api.StatePending)
	after, _, err := GetJobRecord(ctx, cli, job)
	if err != nil || after.Spec.Passes != 5 {
		t.Errorf("record after reopen: passes %d (%v), want 5", after.Spec.Passes, err)
	}
	var p schema.PlacementRecord
	if _, err := GetJSON(ctx, cli, PlacementKey(job), &p); err != nil || len(p.Workers) != 0 || p.Home != "n2" || p.Gen != 4 {
		t.Errorf("placement after reopen: %+v (%v), want no worker, home n2, gen 4", p, err)
	}
	for key, want := range map[string]int64{WorkerPrefix(job): 0, MasterMetaKey(job): 1, GlobalCheckpointKey(job): 1} {
		resp, err := cli.Get(ctx, key, clientv3.WithPrefix(), clientv3.WithCountOnly())
		if err != nil || resp.Count != want {
			t.Errorf("%s: %d keys (%v), want %d", key, resp.Count, err, want)
		}
	}
	if _, err := ReopenJob(ctx, cli, uniqueJob(t)+"-none", func(*Reopened) error { return nil }); !errors.Is(err, ErrNoJob) {
		t.Errorf("reopen of a job without a record: %v, want ErrNoJob", err)
	}
}

func assertState(t *testing.T, ctx context.Context, cli *clientv3.Client, job string, want api.JobState) {
	t.Helper()
	st, err := JobState(ctx, cli, job)
	if err != nil || st.State != want {
		t.Errorf("job %s: state %s (%v), want %s", job, st.State, err, want)
	}
}
