package trainer

import (
	"context"
	"fmt"
	"sync"

	"github.com/gtrain/gtrain/api"
	"github.com/gtrain/gtrain/dataset"
	"github.com/gtrain/gtrain/pserver/client"
)

// computeWhilePushing computes a built-in model's micro-batch and pushes
// it at the same time, as PyTorch's DDP overlaps its all-reduce with the
// backward pass: the model announces each parameter's gradient once final
// (the last layer first) and the push sends each pserver's blocks as soon
// as theirs are, so that the pservers holding the upper layers receive,
// apply and send back while the lower layers compute. The values pushed
// are those a push after the computation would send: only the time differs.
func (t *trainer) computeWhilePushing(ctx context.Context, w *api.GetStepResponse, ex []dataset.Example) (bool, error) {
	g := newGradGate(len(t.grads))
	var loss float64
	var cerr error
	computed := make(chan struct{})
	go func() {
		defer close(computed)
		loss, cerr = t.compute(ex, g.open)
		g.finish(cerr)
	}()
	// Nothing can be sent before the first gradient: the push (and its
	// time in the metrics) starts there.
	if err := g.wait(ctx, -1); err != nil {
		<-computed
		if cerr != nil {
			return false, cerr
		}
		return false, err
	}
	// A PushPull brings the next step's parameters into t.params: not
	// before the backward pass stopped reading them (a pserver holding
	// only upper layers applies the step while the lower ones compute).
	free := func(ctx context.Context) error {
		select {
		case <-computed:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	done, err := t.pushAndReport(ctx, w, func() float64 { <-computed; return loss }, len(ex),
		client.WaitForGradient(g.wait), client.WaitBeforePull(free))
	<-computed // t.grads and t.batch are the next micro-batch's
	if cerr != nil {
		return false, cerr
	}
	return done, err
}

// gradGate tells a push which parameters' gradients are final.
type gradGate struct {
	ready  []chan struct{}
	first  chan struct{} // closed with the first ready parameter
	mu     sync.Mutex
	opened []bool
	any    bool
	failed chan struct{} // closed when the computation failed
	err    error
}

func newGradGate(params int) *gradGate {
	g := &gradGate{ready: make([]chan struct{}, params), opened: make([]bool, params),
		first: make(chan struct{}), failed: make(chan struct{})}
	for j := range g.ready {
		g.ready[j] = make(chan struct{})
	}
	return g
}

// open marks parameter j's gradient final.
func (g *gradGate) open(j int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.opened[j] {
		g.opened[j] = true
		close(g.ready[j])
	}
	if !g.any {
		g.any = true
		close(g.first)
	}
}

// finish ends the computation: with an error, every wait for a parameter
// not yet final fails with it (nothing half-computed is ever sent).
func (g *gradGate) finish(err error) {
	if err == nil {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	g.err = err
	close(g.failed)
}

// wait returns once parameter j's gradient is final (j -1: any parameter's),
// or with the computation's error, or with ctx's.
func (g *gradGate) wait(ctx context.Context, j int) error {
	ch := g.first
	if j >= 0 {
		ch = g.ready[j]
	}
	select {
	case <-ch:
		return nil
	case <-g.failed:
		select {
		case <-ch: // final before the failure: still good
			return nil
		default:
		}
		return fmt.Errorf("gradient not computed: %w", g.err)
	case <-ctx.Done():
		return ctx.Err()
	}
}
