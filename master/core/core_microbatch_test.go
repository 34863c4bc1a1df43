package core

import (
	"reflect"
	"testing"

	"github.com/gtrain/gtrain/api"
)

// runMicroBatches drives a sync core of trainers trainers over 3
// micro-batches of 4 records per step through a pass, the trainers asking
// in turn, and returns what each (step, micro-batch) covered.
func runMicroBatches(t *testing.T, trainers int) (map[[2]int64][]Slice, Meta) {
	t.Helper()
	cfg := FixtureSyncConfig(trainers, 4, 1)
	cfg.MicroBatches = 3
	c := newCore(t, cfg)
	got := map[[2]int64][]Slice{}
	for turn := 0; !c.meta.Done && turn < 1000; turn++ {
		k := turn % trainers
		w := c.Step(k, 0, c.meta.Epoch, t0)
		if w.Status != api.WorkStatus_WORK_READY {
			if c.ending {
				c.PassEnded(PassEnd{Pass: c.meta.Pass, Step: c.meta.Step, Epoch: c.meta.Epoch}, api.Metrics{}, t0)
			}
			continue
		}
		key := [2]int64{w.Step, int64(w.MicroBatch)}
		if _, dup := got[key]; dup {
			t.Fatalf("%d trainers: step %d micro-batch %d handed out twice", trainers, w.Step, w.MicroBatch)
		}
		got[key] = w.Slices
		if _, err := c.StepDone(k, w.MicroBatch, w.Step, w.Epoch, 1, int64(len(SliceRecords(w.Slices))), t0); err != nil {
			t.Fatal(err)
		}
	}
	return got, c.Meta()
}

// TestCoreStepsDoNotDependOnTrainers: 1, 2 or 8 trainers compute the same
// micro-batches (the same records at the same step and place in the sum),
// and every record of the pass is applied exactly once.
func TestCoreStepsDoNotDependOnTrainers(t *testing.T) {
	want, meta := runMicroBatches(t, 1)
	if len(meta.SamplesApplied) != 1 || meta.SamplesApplied[0] != int64(FixtureTaskSet().Records) {
		t.Fatalf("samples applied %v, want [%d]", meta.SamplesApplied, FixtureTaskSet().Records)
	}
	for _, n := range []int{2, 8} {
		got, m := runMicroBatches(t, n)
		if !reflect.DeepEqual(got, want) || !reflect.DeepEqual(m.SamplesApplied, meta.SamplesApplied) {
			t.Fatalf("%d trainers computed %v (samples %v), 1 trainer %v (samples %v)", n, got, m.SamplesApplied, want, meta.SamplesApplied)
		}
	}
}

// TestCoreLostTrainersMicroBatchGoesToAnother: a trainer that leaves with a
// micro-batch unreported gives it back; the next asker gets it, and a late
// report of the leaver's counts once.
func TestCoreLostTrainersMicroBatchGoesToAnother(t *testing.T) {
	cfg := FixtureSyncConfig(3, 4, 1)
	c := newCore(t, cfg)
	w1 := c.Step(1, 0, 0, t0)
	if w1.MicroBatch != 1 {
		t.Fatalf("trainer 1 got micro-batch %d, want its home 1", w1.MicroBatch)
	}
	w0 := c.Step(0, 0, 0, t0)
	w2 := c.Step(2, 0, 0, t0)
	if eff := c.TrainerLost(1); !eff.Changed {
		t.Fatal("losing a trainer that holds a micro-batch changed nothing")
	}
	recs := func(w Work) int64 { return int64(len(SliceRecords(w.Slices))) }
	c.StepDone(0, w0.MicroBatch, 0, 0, 1, recs(w0), t0)
	again := c.Step(0, 0, 0, t0)
	if again.Step != 0 || again.MicroBatch != 1 || !reflect.DeepEqual(again.Slices, w1.Slices) {
		t.Fatalf("after trainer 1 left, trainer 0 got %+v, want step 0 micro-batch 1", again)
	}
	c.StepDone(1, 1, 0, 0, 1, recs(w1), t0) // the leaver's late report: first wins
	c.StepDone(0, 1, 0, 0, 1, recs(again), t0)
	c.StepDone(2, w2.MicroBatch, 0, 0, 1, recs(w2), t0)
	if c.meta.Step != 1 || c.meta.PassSamples != 12 {
		t.Fatalf("step %d, %d samples; want step 1 committed with 12 records once", c.meta.Step, c.meta.PassSamples)
	}
}

// TestCorePullWithPushOnlyWhenOthersCoverTheStep: the hint that a push may
// wait for its step is given only when every other micro-batch of the step
// is reported, held by another trainer, or the home of another live one.
func TestCorePullWithPushOnlyWhenOthersCoverTheStep(t *testing.T) {
	cfg := FixtureSyncConfig(2, 4, 1)
	c := newCore(t, cfg)
	c.TrainersLive([]int{0, 1})
	w0 := c.Step(0, 0, 0, t0)
	if w0.MicroBatch != 0 || !w0.PullWithPush {
		t.Fatalf("trainer 0 with live trainer 1: %+v, want micro-batch 0 with pull_with_push", w0)
	}
	w1 := c.Step(1, 0, 0, t0)
	if w1.MicroBatch != 1 || !w1.PullWithPush {
		t.Fatalf("trainer 1, micro-batch 0 held by trainer 0: %+v, want micro-batch 1 with pull_with_push", w1)
	}

	alone := newCore(t, cfg)
	alone.TrainersLive([]int{0})
	w := alone.Step(0, 0, 0, t0)
	if w.PullWithPush {
		t.Fatalf("trainer 0 alone (trainer 1 not live): %+v, want no pull_with_push: it computes micro-batch 1 too", w)
	}
	if _, err := alone.StepDone(0, w.MicroBatch, w.Step, w.Epoch, 1, int64(len(SliceRecords(w.Slices))), t0); err != nil {
		t.Fatal(err)
	}
	last := alone.Step(0, 0, 0, t0)
	if last.Step != 0 || last.MicroBatch != 1 || !last.PullWithPush {
		t.Fatalf("trainer 0's second micro-batch, the first reported: %+v, want micro-batch 1 with pull_with_push", last)
	}
}
