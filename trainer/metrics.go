package trainer

import (
	"context"

	"github.com/gtrain/gtrain/internal/clock"
	"github.com/gtrain/gtrain/metrics"
	"github.com/gtrain/gtrain/pserver/client"
)

// timedPservers records the latency of every push and pull, and the steps
// and records pushed, for /metrics.
type timedPservers struct {
	pservers
	m     *metrics.Trainer
	clock clock.Clock
}

func (p timedPservers) Pull(ctx context.Context, minStep, epoch int64, params [][]float32) (int64, int64, error) {
	start := p.clock.Now()
	lo, hi, err := p.pservers.Pull(ctx, minStep, epoch, params)
	if err == nil {
		p.m.Pulled(p.clock.Since(start))
	}
	return lo, hi, err
}

func (p timedPservers) Push(ctx context.Context, trainer int, step, epoch, records int64, checkpoint bool, grads [][]float32, opts ...client.PushOption) error {
	start := p.clock.Now()
	err := p.pservers.Push(ctx, trainer, step, epoch, records, checkpoint, grads, opts...)
	p.m.Pushed(p.clock.Since(start), records, err == nil)
	return err
}

// PushPull counts as a push: its time includes the wait for the step (and,
// for a push overlapped with the backward pass, from the first gradient
// computed on, the wait for the others).
func (p timedPservers) PushPull(ctx context.Context, trainer int, step, epoch, records int64, checkpoint bool, grads, params [][]float32, accepted func(), opts ...client.PushOption) (client.Pulled, error) {
	start := p.clock.Now()
	pulled, err := p.pservers.PushPull(ctx, trainer, step, epoch, records, checkpoint, grads, params, accepted, opts...)
	p.m.Pushed(p.clock.Since(start), records, err == nil)
	return pulled, err
}
