package trainer

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"sync"

	"github.com/gtrain/gtrain/api"
	"github.com/gtrain/gtrain/dataset"
	"github.com/gtrain/gtrain/model"
	"github.com/gtrain/gtrain/pserver/client"
)

// computeWhilePushing computes a built-in model's micro-batch and pushes
// it at the same time, as PyTorch's DDP overlaps its all-reduce with the
// backward pass: the model tells each parameter's gradient as it becomes
// final (the first layer's weight first, the order the next forward pass
// reads them, and a weight's first rows before its last) and the push
// sends each pserver's blocks as soon as they are, so that the pservers
// holding the lower layers receive, apply and send back while the upper
// layers' gradients compute. The values pushed are those a push after the
// computation would send: only the time differs.
//
// Once computed, it starts reading the records of hint (hint.go), and if
// its push ends before the report's answer it starts the next micro-batch
// early (early.go). A trainer computing on CPUs of its own reads the hint
// while it computes and starts the next micro-batch before the push's last
// answer (ahead.go).
func (t *trainer) computeWhilePushing(ctx context.Context, w *api.GetStepResponse, ex []dataset.Example, hint *hintRead) (bool, error) {
	return t.pushWhileComputing(ctx, w, len(ex), t.startComputing(ex), hint)
}

// computation is a micro-batch's gradient computing on its own goroutine:
// its gate tells a push what is final, computed closes when it returns.
type computation struct {
	gate     *gradGate
	computed chan struct{}
	loss     float64
	err      error // read after computed
}

// startComputing starts computing the gradient sums of ex into t.grads.
func (t *trainer) startComputing(ex []dataset.Example) *computation {
	return t.startComputingAwaiting(ex, nil)
}

// startComputingAwaiting is startComputing for parameters still coming
// back (ahead.go): the forward pass awaits each (model.Progress.Await; a
// nil await has them all here), and the computation fails with
// errParamsNotBack, having written no gradient, if one never comes.
func (t *trainer) startComputingAwaiting(ex []dataset.Example, await func(param int) bool) *computation {
	c := &computation{gate: newGradGate(t.grads), computed: make(chan struct{})}
	c.gate.pinned = t.prog == nil && t.pinnedOK.Load()
	go func() {
		defer close(c.computed)
		p := c.gate.progress()
		p.Await = await
		c.loss, c.err = t.compute(ex, p)
		if p.Stopped && c.err == nil {
			c.err = errParamsNotBack
		}
		c.gate.finish(c.err)
	}()
	return c
}

// pushWhileComputing pushes w's gradients, of records records, as c
// computes them, and reports w.
func (t *trainer) pushWhileComputing(ctx context.Context, w *api.GetStepResponse, records int, c *computation, hint *hintRead) (bool, error) {
	if t.computer != nil {
		hint.start() // read on the shared CPUs: the computation's own are not slowed
	}
	go func() {
		<-c.computed
		hint.start()
	}()
	g := c.gate
	// Nothing can be sent before the first gradient: the push (and its
	// time in the metrics) starts there.
	if err := g.until(ctx, g.anyFinal); err != nil {
		<-c.computed
		if c.err != nil {
			return false, c.err
		}
		return false, err
	}
	opts := []client.PushOption{client.WaitForGradient(g.waitAny), client.WaitBeforePull(g.waitReleased)}
	a := t.startAhead(w, hint)
	if a != nil {
		opts = append(opts, a.pushOption())
		t.ahead = a
		defer func() { t.settle(a); t.ahead = nil }()
	}
	// A PushPull brings the next step's parameters into t.params: a
	// pserver's not before the backward pass stopped reading every
	// parameter it holds (a pserver holding only lower layers applies the
	// step, and is read from, while the upper ones' gradients compute).
	pushed := func() {
		<-c.computed
		if a != nil {
			t.settle(a)
			return
		}
		t.startEarly(w, hint)
	}
	done, err := t.pushAndReport(ctx, w, func() float64 { <-c.computed; return c.loss }, records, pushed, opts...)
	<-c.computed // t.grads and t.batch are the next micro-batch's
	if c.err != nil {
		return false, c.err
	}
	return done, err
}

// gradGate tells a push how much of each parameter's gradient is final,
// and a pull which parameters the computation reads no more.
type gradGate struct {
	mu       sync.Mutex
	size     []int // each gradient's floats
	final    []int // each gradient's first floats final
	released []bool
	changed  chan struct{} // closed, and replaced, at every change
	pinned   bool          // the computation runs on CPUs of its own (tell)
	err      error         // the computation failed
}

func newGradGate(grads [][]float32) *gradGate {
	g := &gradGate{size: make([]int, len(grads)), final: make([]int, len(grads)), released: make([]bool, len(grads)),
		changed: make(chan struct{})}
	for j, gr := range grads {
		g.size[j] = len(gr)
	}
	return g
}

// progress is what the model tells the gate through. A gradient final
// wakes the push waiting for it and yields (tell).
func (g *gradGate) progress() *model.Progress {
	return &model.Progress{
		Ready:    func(j int) { g.tell(func() { g.final[j] = g.size[j] }) },
		Partial:  func(j, n int) { g.tell(func() { g.final[j] = max(g.final[j], n) }) },
		Released: func(j int) { g.update(func() { g.released[j] = true }) },
	}
}

// tell updates the gate with a gradient's progress and yields the
// computation's P to the push it woke. Woken by the computing goroutine,
// the push is queued on that goroutine's P, which the computation keeps
// through its next OpenBLAS call: when no other P is idle (two trainers
// computing on two cores), the push waited there until the runtime's
// monitor took the P back, and the pservers got the gradient late.
// Measured on the 2-core VM (trainer_mlp group, 5 alternated runs,
// 2026-11-28): 2 trainers of cpu 1 stepped in 29.4-30.9 ms against
// 34.7-44.7 without the yield; 1 trainer in 33.1-38.2 against 33.6-34.3,
// and cpu 2 in 24.5-28.8 against 24.3-29.2, within the noise.
//
// A computation on CPUs of its own (pin.go) does not yield: its goroutine
// is locked to its thread, so a yield parks that thread and wakes another
// for the push, 18 times a step. The push then waits in the computing P's
// next slot until another P takes it or the runtime's monitor takes the P
// back. Measured only together with the pinning (docs/performance.md,
// "Exclusive CPUs": the earlier pinning probe, with the yield, gave
// nothing); two pinned trainers on a larger machine, where the yield
// mattered, are not measured.
func (g *gradGate) tell(change func()) {
	g.update(change)
	if !g.pinned {
		runtime.Gosched()
	}
}

// update changes the gate under its lock and wakes every waiter.
func (g *gradGate) update(change func()) {
	g.mu.Lock()
	defer g.mu.Unlock()
	change()
	close(g.changed)
	g.changed = make(chan struct{})
}

// finish ends the computation: with an error, every wait for a gradient
// not yet final fails with it (nothing half-computed is ever sent), and
// every wait for a parameter's release too.
func (g *gradGate) finish(err error) {
	if err != nil {
		g.update(func() { g.err = err })
	}
}

// waitAny returns the index of the first of pieces whose gradient is
// final, once one is, or the computation's error, or ctx's.
func (g *gradGate) waitAny(ctx context.Context, pieces []client.GradientPiece) (int, error) {
	k := -1
	err := g.until(ctx, func() bool {
		k = slices.IndexFunc(pieces, func(p client.GradientPiece) bool { return g.final[p.Param] >= p.End })
		return k >= 0
	})
	return k, err
}

// anyFinal says whether some gradient is final, in part (under the lock).
func (g *gradGate) anyFinal() bool {
	return slices.ContainsFunc(g.final, func(n int) bool { return n > 0 })
}

// waitReleased returns once the computation reads none of params, or with
// its error, or with ctx's.
func (g *gradGate) waitReleased(ctx context.Context, params []int) error {
	return g.until(ctx, func() bool {
		return !slices.ContainsFunc(params, func(j int) bool { return !g.released[j] })
	})
}

// until returns once ok (read under the gate's lock) holds: a condition met
// before the computation failed still holds after.
func (g *gradGate) until(ctx context.Context, ok func() bool) error {
	for {
		g.mu.Lock()
		met, err, changed := ok(), g.err, g.changed
		g.mu.Unlock()
		switch {
		case met:
			return nil
		case err != nil:
			return fmt.Errorf("gradient not computed: %w", err)
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}
