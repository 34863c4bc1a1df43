package trainer

import (
	"errors"
	"sync"

	"github.com/gtrain/gtrain/api"
	"github.com/gtrain/gtrain/program"
	"github.com/gtrain/gtrain/pserver/client"
)

// ahead is an early micro-batch (early.go) started before its parameters
// are all back: once the micro-batch before it is computed, while the
// push still waits for the last pservers' answers. The built-in models
// compute the first layer's gradient first and their weight gradients in
// the order the next forward pass reads them (model.Progress.Ready), so
// the pservers holding the lower layers answer while the upper layers'
// gradients compute, and the next forward pass starts on their
// parameters while the last pserver's answer is on its way: that answer
// took 1.6-2.1 ms a step off the computation in traces of trainer_mlp on
// the 2-core VM (2026-11-28). The forward pass waits for each layer's
// parameters (model.Progress.Await, from client.OnParams), and writes no
// gradient before it read them all, by when every pserver acknowledged
// the push. settle then makes it the early micro-batch if startEarly
// would have started one, and stops it otherwise.
//
// Only a trainer computing on CPUs of its own (pin.go) starts one: there
// the gap between two micro-batches fell from 3.3 ms to 0.7 and the step
// from 33.9 ms to 31.2 (4 alternated rounds of 3 cpu: 1 jobs on the 2-core
// VM, 2026-11-29), its hint read on the shared CPUs while it computes; and
// to nothing once the computation waited on the compute thread itself
// (29.3 ms a step against 29.9).
// Computing where the pservers apply, it gained nothing: the computation
// grew by what the gap lost (2026-11-28).
//
// A model program that accepted requests sent ahead (program.Client.Ahead)
// starts one too, wherever it computes: its request is written while the
// program computes w, and waits in the pipe; the program tells its
// gradients first layer first, in bands, and releases the parameters when
// autograd's pass ends, so the first layer's are back when it answers.
// program_mlp stepped in 28.4 ms against 31.4 (3 alternated rounds of 3
// jobs on the 2-core VM, 2026-11-29; docs/performance.md).
type ahead struct {
	next     stepOfEpoch
	arrivals *arrivals
	launched chan struct{} // closed once early is set, or left nil
	early    *earlyStep    // nil: none started (the computation or the hint failed)
	settled  bool
}

// errParamsNotBack stops a computation started ahead whose parameters
// will not come (the push brought back other ones, or none).
var errParamsNotBack = errors.New("trainer: the next step's parameters did not come back with the push")

// startAhead starts computing the micro-batch after w ahead (on the
// compute thread once w's computation, running there now, is done; in a
// program, behind w's request), when
// the push of w will bring its parameters back and w's hint names its
// records (startEarly's other conditions); nil otherwise.
func (t *trainer) startAhead(w *api.GetStepResponse, hint *hintRead) *ahead {
	if !t.computesAhead() || hint == nil || !w.PullWithPush || int(w.MicroBatch) != t.id || t.early != nil || t.leaving() {
		return nil
	}
	a := &ahead{next: stepOfEpoch{w.Step + 1, w.Epoch}, arrivals: newArrivals(len(t.params), w.Step+1), launched: make(chan struct{})}
	go func() {
		defer close(a.launched)
		// Read on the shared CPUs while w's micro-batch computes; this
		// computation then waits on the compute thread behind that one and
		// starts there the moment it ends, without waking this goroutine on
		// a busy CPU between the two. Should w's fail, the push ends and
		// settle stops this one.
		hint.start()
		<-hint.done
		if hint.err != nil || len(hint.ex) == 0 {
			return // an empty micro-batch clears the gradients at once: not while they are pushed
		}
		if t.prog != nil {
			// Written to the program now, behind w's request: it reads
			// it the moment it answered w (program.Client.GradientProgress).
			t.progStep = program.Step{Number: a.next.step, Seed: program.RequestSeed(t.spec.Seed, a.next.step, int(w.MicroBatch))}
		}
		a.early = &earlyStep{step: a.next.step, epoch: a.next.epoch, microBatch: w.MicroBatch, hint: hint,
			c: t.startComputingAwaiting(hint.ex, a.arrivals.await)}
	}()
	return a
}

// computesAhead says whether t starts micro-batches ahead: on a compute
// thread of its own (a built-in model), or in a model program that
// accepted requests sent ahead.
func (t *trainer) computesAhead() bool {
	if t.prog != nil {
		return t.prog.Ahead()
	}
	return t.computer != nil
}

// pushOption tells a's arrivals what the push brings back.
func (a *ahead) pushOption() client.PushOption {
	return client.OnParams(a.arrivals.wrote)
}

// settle ends a's wait, once the push returned: it becomes the early
// micro-batch when startEarly would have started one (the push brought
// back its step's parameters, all of them written now), and is stopped and
// waited for otherwise (before the parameters or gradients are touched
// again). Only the first call does anything.
func (t *trainer) settle(a *ahead) {
	if a == nil || a.settled {
		return
	}
	a.settled = true
	keep := t.early == nil && !t.leaving() && t.carry.prefetched != nil && *t.carry.prefetched == a.next
	a.arrivals.end(keep)
	<-a.launched
	if a.early == nil {
		return
	}
	if keep {
		t.early = a.early
		t.earlyAhead++
		return
	}
	<-a.early.c.computed
	if !errors.Is(a.early.c.err, errParamsNotBack) {
		t.earlyDropped++ // computed for nothing
	}
}

// arrivals is which parameters of step are written: each a forward pass
// may read.
type arrivals struct {
	mu      sync.Mutex
	step    int64
	written []bool
	ended   bool // nothing more comes: every parameter written, or the rest never
	stopped bool // ended without its parameters: the computation is not wanted
	changed chan struct{}
}

func newArrivals(params int, step int64) *arrivals {
	return &arrivals{step: step, written: make([]bool, params), changed: make(chan struct{})}
}

// wrote is client.OnParams's: parameter j holds step's values.
func (a *arrivals) wrote(j int, step int64) {
	if step != a.step {
		return // another step's: it never comes
	}
	a.update(func() { a.written[j] = true })
}

// end says the push returned: with all true every parameter holds the
// step's values (the push brought them all back); else none more comes,
// and the computation is not wanted even if all came (a leave, a push to
// retry): it stops before writing a gradient if it is not past that yet.
func (a *arrivals) end(all bool) {
	a.update(func() {
		a.ended, a.stopped = true, !all
		if all {
			for j := range a.written {
				a.written[j] = true
			}
		}
	})
}

func (a *arrivals) update(change func()) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.ended {
		return
	}
	change()
	close(a.changed)
	a.changed = make(chan struct{})
}

// await is model.Progress.Await: true once parameter j is written, false
// once it never will be; for j = -1 (the forward pass done), whether the
// computation is still wanted.
func (a *arrivals) await(j int) bool {
	if j < 0 {
		a.mu.Lock()
		defer a.mu.Unlock()
		return !a.stopped
	}
	for {
		a.mu.Lock()
		ok, ended, changed := a.written[j], a.ended, a.changed
		a.mu.Unlock()
		switch {
		case ok:
			return true
		case ended:
			return false
		}
		<-changed
	}
}
