package master

import (
	"context"
	"github.com/gtrain/gtrain/api"
	"testing"
	"time"
)

type stepClock struct{ now time.Time }

func (c *stepClock) Now() time.Time { return c.now }

type nopEval struct{}

func (nopEval) EndPass(context.Context, int, int64) (api.Metrics, error) { return api.Metrics{}, nil }

func TestStalledNamesTheTrainersAStepWaitsFor(t *testing.T) {
	clock := &stepClock{now: time.Unix(1000, 0)}
	ts := &TaskSet{ChunkRecords: map[int][]int{0: {40}}, Tasks: []Task{{ID: 0, File: "f", Chunks: 1, Records: 40}}, Records: 40}
	cfg := CoreConfig{Sync: true, Trainers: 3, Batch: 4, Passes: 1, Queue: DefaultQueueConfig(), LongPoll: time.Millisecond}
	core, err := NewCore(context.Background(), cfg, ts, &MemStore{}, nopEval{}, clock, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, stalled := core.Stalled(30 * time.Second); stalled {
		t.Fatal("stalled at once")
	}
	if err := core.StepDone(context.Background(), 1, 0, 0, 1, 4); err != nil {
		t.Fatal(err)
	}
	clock.now = clock.now.Add(29 * time.Second)
	if _, _, stalled := core.Stalled(30 * time.Second); stalled {
		t.Fatal("stalled before the threshold")
	}
	clock.now = clock.now.Add(2 * time.Second)
	step, missing, stalled := core.Stalled(30 * time.Second)
	if !stalled || step != 0 || len(missing) != 2 || missing[0] != 0 || missing[1] != 2 {
		t.Fatalf("Stalled = step %d missing %v stalled %v; want step 0 missing [0 2]", step, missing, stalled)
	}
}
