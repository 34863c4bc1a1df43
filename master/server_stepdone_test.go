package master

import (
	"testing"

	"github.com/gtrain/gtrain/api"
	"github.com/gtrain/gtrain/master/core"
)

// A report asking for the next work gets GetStep's answer with it: one
// master round trip per micro-batch; without want_next, nothing.
func TestServerStepDoneAnswersTheNextWork(t *testing.T) {
	d := mustDriver(t, t.Context(), core.FixtureSyncConfig(2, 4, 1), core.FixtureTaskSet(), &MemStore{}, &fakeEvaluator{}, newFakeClock())
	s := NewServer(d, nil, 2)
	ctx := t.Context()
	var mbs []int32
	for k := range int32(2) {
		w, err := s.GetStep(ctx, &api.GetStepRequest{TrainerId: k})
		if err != nil || w.Status != api.WorkStatus_WORK_READY || w.Step != 0 {
			t.Fatalf("trainer %d: GetStep = %v, %v; want step 0", k, w, err)
		}
		mbs = append(mbs, w.MicroBatch)
	}
	r, err := s.StepDone(ctx, &api.StepDoneRequest{TrainerId: 0, Step: 0, MicroBatch: mbs[0], Records: 4})
	if err != nil || r.Next != nil {
		t.Fatalf("report without want_next: %v, %v; want no next work", r, err)
	}
	r, err = s.StepDone(ctx, &api.StepDoneRequest{TrainerId: 1, Step: 0, MicroBatch: mbs[1], Records: 4, WantNext: true})
	if err != nil {
		t.Fatal(err)
	}
	if n := r.GetNext(); n.GetStatus() != api.WorkStatus_WORK_READY || n.Step != 1 || n.MicroBatch != 1 || len(n.Slices) == 0 {
		t.Fatalf("next work in the answer %v, want trainer 1's micro-batch of step 1", n)
	}
	if _, at := d.Position(); at != 1 {
		t.Fatalf("master at step %d after both reports, want 1", at)
	}
}
