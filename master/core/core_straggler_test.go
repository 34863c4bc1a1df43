package core

import (
	"slices"
	"testing"
	"time"

	"github.com/gtrain/gtrain/api"
)

// TestCoreStragglersMicroBatchIsHandedAgain: a micro-batch held past the
// deadline (4 × the mean micro-batch time, at least the floor) goes to the
// next trainer that asks, once; the first report counts, the straggler's
// late one changes nothing, and each trainer's last time is kept.
func TestCoreStragglersMicroBatchIsHandedAgain(t *testing.T) {
	cfg := FixtureSyncConfig(2, 4, 1)
	cfg.StragglerFloor = 300 * time.Millisecond
	c := newCore(t, cfg)
	at := func(d time.Duration) time.Time { return t0.Add(d) }
	recs := func(w Work) int64 { return int64(len(SliceRecords(w.Slices))) }
	w0, w1 := c.Step(0, 0, 0, at(0)), c.Step(1, 0, 0, at(0))
	c.StepDone(0, w0.MicroBatch, 0, 0, 1, recs(w0), at(100*time.Millisecond))
	// Before the deadline (max(300ms, 4 × 100ms) = 400ms): the next step's.
	if w := c.Step(0, 0, 0, at(300*time.Millisecond)); w.Step != 1 {
		t.Fatalf("before the deadline: %+v, want a micro-batch of step 1", w)
	}
	w := c.Step(0, 0, 0, at(450*time.Millisecond))
	if w.Status != api.WorkStatus_WORK_READY || w.Step != 0 || w.MicroBatch != w1.MicroBatch {
		t.Fatalf("past the deadline: %+v, want trainer 1's micro-batch %d of step 0", w, w1.MicroBatch)
	}
	if again := c.Step(0, 0, 0, at(460*time.Millisecond)); again.Step == 0 {
		t.Fatalf("a straggler's micro-batch handed a third time: %+v", again)
	}
	c.StepDone(0, w.MicroBatch, 0, 0, 1, recs(w), at(500*time.Millisecond))
	if c.meta.Step != 1 || c.meta.PassSamples != recs(w0)+recs(w1) {
		t.Fatalf("step %d, samples %d; want step 0 committed with %d", c.meta.Step, c.meta.PassSamples, recs(w0)+recs(w1))
	}
	// Steps go on without it, but it is hung all the same.
	if _, missing, stalled := c.Stalled(time.Second, at(1600*time.Millisecond)); !stalled || !slices.Equal(missing, []int{1}) {
		t.Fatalf("Stalled = %v %v, want trainer 1 stuck", missing, stalled)
	}
	c.StepDone(1, w1.MicroBatch, 0, 0, 1, recs(w1), at(3*time.Second)) // the straggler, late
	if c.meta.PassSamples != recs(w0)+recs(w1) {
		t.Fatalf("the late report counted: %d samples", c.meta.PassSamples)
	}
	if got := c.StepTimes(); got[0] != 40*time.Millisecond {
		t.Fatalf("step times %v, want trainer 0 at 40ms (since its last hand-out)", got)
	}
}
