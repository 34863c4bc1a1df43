package trainer

import (
	"slices"
	"sync"

	"github.com/gtrain/gtrain/api"
	"github.com/gtrain/gtrain/dataset"
	"google.golang.org/protobuf/proto"
)

// hintRead is the records of the slices the master named as this
// micro-batch's next (api.GetStepResponse.next_slices), read while the
// micro-batch computes: without it, the next work's records are read after
// the report's answer names that work, and the next step's forward pass
// waits for them (about 0.6-0.9 ms a step of 256 Fashion-MNIST records
// here). A hint is not an assignment: its records are used only when the
// next work names exactly its slices, and read afresh otherwise.
//
// The read starts once the micro-batch's gradient is computed (start):
// where the push overlaps the computation, while it waits for the
// pservers' acknowledgement; elsewhere, beside the whole push. Read during the
// computation, it slowed the computation by more than it saved (in-job
// traces here: the backward pass ended 2.3 ms later for a read of 0.7),
// except on a trainer computing on CPUs of its own (pin.go), whose read
// runs on the shared CPUs: it starts at once there, since the next
// micro-batch, started ahead of its parameters (ahead.go), waits for it.
type hintRead struct {
	slices []*api.Slice
	read   func() ([]dataset.Example, error)
	once   sync.Once
	done   chan struct{} // closed once ex and err are set
	ex     []dataset.Example
	err    error
}

// hintOf keeps w's hint, if it has one, to read once started.
func (t *trainer) hintOf(w *api.GetStepResponse) *hintRead {
	t.carry.hint = nil
	if len(w.NextSlices) == 0 {
		return nil
	}
	next := &api.GetStepResponse{Step: w.Step + 1, Slices: w.NextSlices}
	t.carry.hint = &hintRead{slices: w.NextSlices, done: make(chan struct{}),
		read: func() ([]dataset.Example, error) { return t.stepExamples(next) }}
	return t.carry.hint
}

// start starts reading the hint's records (once; nothing for nil).
func (h *hintRead) start() {
	if h == nil {
		return
	}
	h.once.Do(func() {
		go func() {
			defer close(h.done)
			h.ex, h.err = h.read()
		}()
	})
}

// examplesOf reads the records of w's slices, or takes them from the
// hint's read when the hint named the same slices and read them without
// error.
func (t *trainer) examplesOf(w *api.GetStepResponse) ([]dataset.Example, error) {
	h := t.carry.hint
	t.carry.hint = nil
	if h != nil && sameSlices(h.slices, w.Slices) {
		h.start()
		<-h.done
		if h.err == nil {
			return h.ex, nil
		}
	}
	return t.stepExamples(w)
}

// sameSlices says whether a and b name the same records.
func sameSlices(a, b []*api.Slice) bool {
	return slices.EqualFunc(a, b, func(x, y *api.Slice) bool { return proto.Equal(x, y) })
}
