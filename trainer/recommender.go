package trainer

import (
	"context"
	"fmt"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/gtrain/gtrain/dataset"
	"github.com/gtrain/gtrain/model"
)

// recState is a recommender trainer's (model.kind recommender): the
// micro-batch laid out per id field, and its row gradients; their memory
// is reused from step to step.
type recState struct {
	tables []model.RecTable // one per id field, in the records' order
	batch  model.RecBatch
	grads  model.RecGrads
}

func newRecState(rec *model.Recommender) *recState { return &recState{tables: rec.Tables()} }

// recCompute computes a recommender's micro-batch: it pulls the rows its
// records name (as of step: the same step as the dense parameters in
// t.params), computes the dense gradients into t.grads and one gradient per
// distinct row, and, if push, sends the rows' gradients (before the dense
// push, which applies them). A step the pservers moved past or rolled back
// is a resync error (resync reports it).
func (t *trainer) recCompute(ctx context.Context, ex []dataset.Example, step, epoch int64, microBatch int, push bool) (float64, error) {
	r := t.rec
	dataset.ToRecBatch(&r.batch, ex, len(r.tables))
	err := t.retryTransient(ctx, "pull rows", func() error {
		return t.psErr(ctx, t.ps.PullBatchRows(ctx, r.tables, &r.batch, step, epoch))
	})
	if err != nil {
		return 0, err
	}
	if err := t.layout.Rec.CheckBatch(r.batch); err != nil {
		return 0, fmt.Errorf("trainer: bad records: %w", err)
	}
	for _, g := range t.grads {
		clear(g)
	}
	r.grads.Dense = t.grads
	r.grads.ZeroRows(r.batch)
	loss := t.layout.Rec.Gradient(t.params, r.batch, r.grads)
	if !push || len(ex) == 0 {
		return loss, nil
	}
	err = t.retryTransient(ctx, "push rows", func() error {
		return t.psErr(ctx, t.ps.PushBatchRows(ctx, microBatch, step, epoch, int64(len(ex)), r.tables, &r.batch, r.grads.Rows))
	})
	if status.Code(err) == codes.AlreadyExists {
		return loss, nil // the step is applied, this micro-batch in it: the dense push will say so too
	}
	return loss, err
}
