package trainer

import (
	"context"
	"fmt"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/gtrain/gtrain/api"
	"github.com/gtrain/gtrain/dataset"
	"github.com/gtrain/gtrain/metrics"
	"github.com/gtrain/gtrain/model"
	"github.com/gtrain/gtrain/pserver/client"
)

// recState is the state of a trainer whose model has embedding tables
// (model.kind recommender, or a program that declared tables): the
// micro-batch laid out per table, and its row gradients; their memory is
// reused from step to step.
type recState struct {
	tables []model.RecTable // the layout's (the recommender's: one per id field, in the records' order)
	fields []int            // the records' id field of each table
	batch  model.RecBatch
	grads  model.RecGrads
	// ahead is the next micro-batch's rows, pulled while the master
	// answers the report (rowsahead.go), in spare: nil when none are.
	ahead *rowsAhead
	spare model.RecBatch
}

// newRecState is the state of the tables of layout l; nil for a model
// without tables.
func newRecState(l *client.Layout) *recState {
	if len(l.Tables) == 0 {
		return nil
	}
	return &recState{tables: l.Tables, fields: l.TableFields}
}

// recCompute computes a recommender's micro-batch: it pulls the rows its
// records name (as of step: the same step as the dense parameters in
// t.params), unless they were pulled ahead for these slices
// (rowsahead.go), computes the dense gradients into t.grads and one
// gradient per distinct row, and, if push, sends the rows' gradients
// (before the dense push, which applies them; a sync trainer's go with it
// instead, rowsOf). A step the pservers moved past or rolled back
// is a resync error (resync reports it).
func (t *trainer) recCompute(ctx context.Context, ex []dataset.Example, sl []*api.Slice, step, epoch int64, microBatch int, push bool) (float64, error) {
	r := t.rec
	if !t.takeRowsAhead(sl, step, epoch) {
		dataset.ToTableBatch(&r.batch, ex, r.fields)
		err := t.retryTransient(ctx, "pull rows", func() error {
			return t.psErr(ctx, t.ps.PullBatchRows(ctx, r.tables, &r.batch, step, epoch))
		})
		if err != nil {
			return 0, err
		}
		t.metrics.RowsPulled(metrics.RowsInStep)
	}
	for _, g := range t.grads {
		clear(g)
	}
	r.grads.Dense = t.grads
	r.grads.ZeroRows(r.batch)
	start := t.clock.Now() // the rows' pull above and push below are not computing
	var loss float64
	var err error
	t.computer.run(func() { loss, err = t.recGradient() }) // on CPUs of its own, if it has them (pin.go)
	if err != nil {
		return 0, err
	}
	if len(ex) > 0 { // as compute: an empty micro-batch computes nothing
		t.metrics.Computed(t.clock.Since(start))
	}
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

// rowsOf is the push option that carries the row gradients recCompute
// left in t.rec for the micro-batch ex (none for an empty one).
func (t *trainer) rowsOf(ex []dataset.Example) []client.PushOption {
	if len(ex) == 0 {
		return nil
	}
	r := t.rec
	return []client.PushOption{client.Rows(r.tables, &r.batch, r.grads.Rows)}
}

// recGradient computes the gradients of t.rec.batch, whose rows are
// pulled, into t.grads and t.rec.grads.Rows (zeroed): the program's, when
// the model is one, else the built-in recommender's.
func (t *trainer) recGradient() (float64, error) {
	r := t.rec
	if t.prog == nil {
		if err := t.layout.Rec.CheckBatch(r.batch); err != nil {
			return 0, fmt.Errorf("trainer: bad records: %w", err)
		}
		return t.layout.Rec.Gradient(t.params, r.batch, r.grads), nil
	}
	if r.batch.N == 0 {
		return 0, nil
	}
	b := model.Batch{N: r.batch.N, Inputs: t.spec.Model.Inputs, X: r.batch.Dense, Y: r.batch.Y}
	if err := t.layout.Spec.CheckBatch(b); err != nil {
		return 0, fmt.Errorf("trainer: bad records: %w", err)
	}
	loss, err := t.prog.GradientRows(context.Background(), t.progStep, t.layout.Params, t.params, b, r.batch.Fields, t.grads, r.grads.Rows)
	if err != nil {
		return 0, fmt.Errorf("trainer: %w", t.noteCrash(err))
	}
	return loss, nil
}
