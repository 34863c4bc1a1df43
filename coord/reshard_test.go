package coord

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/gtrain/gtrain/coord/schema"
	clientv3 "go.etcd.io/etcd/client/v3"
)

func TestNextLayoutSource(t *testing.T) {
	paused := time.Unix(100, 0)
	first := NextLayout(schema.LayoutRecord{}, 2, 3, 40, paused)
	if first != (schema.LayoutRecord{Generation: 1, Pservers: 3, FromStep: 40, SourcePservers: 2, Paused: paused}) {
		t.Fatalf("first generation %+v", first)
	}
	if !first.Resharding() {
		t.Fatal("a generation without its pause is under way")
	}
	// No step between two generations: the second re-cuts the files the first re-cut.
	again := NextLayout(first, 3, 1, 40, paused)
	if again.Generation != 2 || again.SourcePservers != 2 || again.Pservers != 1 {
		t.Fatalf("generation at the same step %+v, want source 2", again)
	}
	later := NextLayout(first, 3, 2, 90, paused)
	if later.SourcePservers != 3 {
		t.Fatalf("generation at a later step %+v, want source 3", later)
	}
}

// TestCommitLayout: the layout, the job record's count and the global
// checkpoint move together, only while the guard holds and the record is
// unchanged; marks after the step go, and the reshard keys parse as such.
func TestCommitLayout(t *testing.T) {
	cli := dialTest(t)
	ctx := context.Background()
	job := uniqueJob(t)
	rec := schema.JobRecord{}
	rec.Spec.Name, rec.Spec.Pservers = job, 2
	if _, err := cli.Put(ctx, JobKey(job), MustJSON(rec)); err != nil {
		t.Fatal(err)
	}
	if _, err := cli.Put(ctx, CheckpointMarkKey(job, 41, MasterMark), "f"); err != nil {
		t.Fatal(err)
	}
	if err := SetReshardRequest(ctx, cli, job, schema.ReshardRequest{Pservers: 3, By: "op"}); err != nil {
		t.Fatal(err)
	}
	never := clientv3.Compare(clientv3.CreateRevision(JobKey(job)), "=", 1) // not the record's
	next := NextLayout(schema.LayoutRecord{}, 2, 3, 40, time.Now())
	global := schema.GlobalCheckpoint{Step: 40, Pass: 1, Steps: []int64{20, 40}}
	if err := CommitLayout(ctx, cli, never, job, next, global); !errors.Is(err, ErrFenced) {
		t.Fatalf("commit under a failed guard: %v, want ErrFenced", err)
	}
	if l, _ := GetLayout(ctx, cli, job); l.Generation != 0 {
		t.Fatalf("a refused commit wrote the layout %+v", l)
	}
	holds := clientv3.Compare(clientv3.CreateRevision(JobKey(job)), ">", 0)
	if err := CommitLayout(ctx, cli, holds, job, next, global); err != nil {
		t.Fatal(err)
	}
	req, l, err := GetReshard(ctx, cli, job)
	if err != nil || req.Pservers != 3 || l.Generation != 1 || l.Pservers != 3 || l.FromStep != 40 {
		t.Fatalf("after commit: request %+v layout %+v err %v", req, l, err)
	}
	got, _, err := GetJobRecord(ctx, cli, job)
	if err != nil || got.Spec.Pservers != 3 {
		t.Fatalf("job record pservers %d (%v), want 3", got.Spec.Pservers, err)
	}
	var g schema.GlobalCheckpoint
	if _, err := GetJSON(ctx, cli, GlobalCheckpointKey(job), &g); err != nil || g.Step != 40 || len(g.Steps) != 1 {
		t.Fatalf("global checkpoint %+v (%v), want step 40 alone", g, err)
	}
	if resp, _ := cli.Get(ctx, CheckpointMarkStepPrefix(job, 41), clientv3.WithPrefix()); len(resp.Kvs) != 0 {
		t.Fatal("a mark after the generation's step survived")
	}
	for key, want := range map[string]JobKeyKind{ReshardRequestKey(job): JobKeyReshardRequest, LayoutKey(job): JobKeyLayout} {
		if p, ok := ParseJobKey(key); !ok || p.Kind != want || p.Job != job {
			t.Fatalf("ParseJobKey(%s) = %+v, %v", key, p, ok)
		}
	}
}

func TestWatchLayout(t *testing.T) {
	cli := dialTest(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	job := uniqueJob(t)
	moved := WatchLayout(ctx, cli, job, 0)
	select {
	case <-moved:
		t.Fatal("moved without a new generation")
	case <-time.After(200 * time.Millisecond):
	}
	if _, err := cli.Put(ctx, LayoutKey(job), MustJSON(schema.LayoutRecord{Generation: 1, Pservers: 3})); err != nil {
		t.Fatal(err)
	}
	select {
	case <-moved:
	case <-ctx.Done():
		t.Fatal("a new generation was not seen")
	}
}
