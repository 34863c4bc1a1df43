package trainer

import (
	"context"

	"github.com/gtrain/gtrain/model"
	"github.com/gtrain/gtrain/pserver/client"
)

// pservers is what a trainer needs of the job's pservers: client.Dynamic,
// or a fake in tests.
type pservers interface {
	// Pull fills params once every pserver applied minStep steps and
	// returns the least and the most advanced pserver's step.
	Pull(ctx context.Context, minStep, epoch int64, params [][]float32) (lowest, highest int64, err error)
	Push(ctx context.Context, trainer int, step, epoch, records int64, checkpoint bool, grads [][]float32, opts ...client.PushOption) error
	// PushPull pushes like Push, calls accepted once every pserver took the
	// push, and fills params with the next step's parameters once every
	// pserver applied the step (Pulled.All), or says it did not get them.
	PushPull(ctx context.Context, trainer int, step, epoch, records int64, checkpoint bool, grads, params [][]float32, accepted func(), opts ...client.PushOption) (client.Pulled, error)
	// Refresh re-discovers the pservers (one may restart at a new address).
	Refresh(ctx context.Context) error
	// Generation is the layout generation the calls go by (client.Dynamic's).
	Generation() int64
	// Committed is the job's committed layout generation (client.Dynamic's).
	Committed(ctx context.Context) (int64, error)
	// PullBatchRows and PushBatchRows move a recommender's embedding rows
	// (client.Client's).
	PullBatchRows(ctx context.Context, tables []model.RecTable, b *model.RecBatch, minStep, epoch int64) error
	PushBatchRows(ctx context.Context, microBatch int, step, epoch, records int64, tables []model.RecTable, b *model.RecBatch, rows [][]float32) error
}

// dynamicPservers calls the pservers through the client Dynamic keeps current.
type dynamicPservers struct{ d *client.Dynamic }

func (p dynamicPservers) Pull(ctx context.Context, minStep, epoch int64, params [][]float32) (int64, int64, error) {
	return p.d.Client().Pull(ctx, minStep, epoch, params)
}

func (p dynamicPservers) Push(ctx context.Context, trainer int, step, epoch, records int64, checkpoint bool, grads [][]float32, opts ...client.PushOption) error {
	return p.d.Client().Push(ctx, trainer, step, epoch, records, checkpoint, grads, opts...)
}

func (p dynamicPservers) PushPull(ctx context.Context, trainer int, step, epoch, records int64, checkpoint bool, grads, params [][]float32, accepted func(), opts ...client.PushOption) (client.Pulled, error) {
	return p.d.Client().PushPull(ctx, trainer, step, epoch, records, checkpoint, grads, params, accepted, opts...)
}

func (p dynamicPservers) Refresh(ctx context.Context) error { return p.d.Refresh(ctx) }

func (p dynamicPservers) Generation() int64 { return p.d.Generation() }

func (p dynamicPservers) Committed(ctx context.Context) (int64, error) { return p.d.Committed(ctx) }

func (p dynamicPservers) PullBatchRows(ctx context.Context, tables []model.RecTable, b *model.RecBatch, minStep, epoch int64) error {
	return p.d.Client().PullBatchRows(ctx, tables, b, minStep, epoch)
}

func (p dynamicPservers) PushBatchRows(ctx context.Context, microBatch int, step, epoch, records int64, tables []model.RecTable, b *model.RecBatch, rows [][]float32) error {
	return p.d.Client().PushBatchRows(ctx, microBatch, step, epoch, records, tables, b, rows)
}
