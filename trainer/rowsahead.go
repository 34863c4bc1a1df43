package trainer

import (
	"context"
	"time"

	"github.com/gtrain/gtrain/api"
	"github.com/gtrain/gtrain/dataset"
	"github.com/gtrain/gtrain/internal/clock"
	"github.com/gtrain/gtrain/metrics"
)

// rowsAhead is the rows of the next micro-batch's records, pulled while the
// master answers the report of the one before: a recommender's step
// otherwise pulls its rows only once the report's answer names its work,
// one round trip to the pservers after another (here, a step of 64 records
// took 1.6-1.8 ms: the rows' pull 0.3, the computation 0.07, the rows' push
// 0.3, the dense push 0.45 and the report 0.55).
//
// The rows are pulled only when the trainer may work ahead, as an early
// micro-batch does (hintedNext: its own micro-batch, staying, the next
// step's parameters brought back, the hint's records read; a trainer
// covering another's, or leaving, would pull rows it drops). Every pserver
// had then applied the step, so the pull waits for nothing: it gives up
// after rowsAheadWait, should a pserver have changed since.
// They are used only by the micro-batch of that step and epoch whose work
// names the hint's slices, under the same layout: the same rows, as of the
// same step, as the pull they stand for would bring. Anything else pulls
// as before.
type rowsAhead struct {
	at     stepOfEpoch
	slices []*api.Slice
	gen    int64 // the layout's generation they were pulled under
}

// pullRowsAhead pulls, into t.rec.spare, the rows of the records w's hint
// named for the next step, if the push of w brought that step's
// parameters back. It is pushAndReport's pushed: it runs while the master
// answers the report. A failed pull is dropped: the step pulls again.
func (t *trainer) pullRowsAhead(ctx context.Context, w *api.GetStepResponse, hint *hintRead) {
	r := t.rec
	if r.ahead != nil { // pulled for a step this trainer did not train
		t.metrics.RowsPulled(metrics.RowsAheadUnused)
		r.ahead = nil
	}
	next, ok := t.hintedNext(w, hint)
	if !ok || len(hint.ex) == 0 {
		return
	}
	gen := t.ps.Generation()
	dataset.ToTableBatch(&r.spare, hint.ex, r.fields)
	pctx, cancel := clock.WithTimeout(ctx, t.clock, rowsAheadWait)
	defer cancel()
	if err := t.ps.PullBatchRows(pctx, r.tables, &r.spare, next.step, next.epoch); err != nil {
		t.log.Debug("rows pulled ahead failed; the step pulls them again", "step", next.step, "err", err)
		return
	}
	r.ahead = &rowsAhead{at: next, slices: hint.slices, gen: gen}
}

// rowsAheadWait bounds a pull of rows ahead, which the report's answer may
// be waiting behind: it waits for nothing unless a pserver changed since
// the push (restarted, or lost), and the step then pulls as before.
const rowsAheadWait = 250 * time.Millisecond

// takeRowsAhead makes the rows pulled ahead the micro-batch's, when they
// are of its step, epoch, slices and layout, and says whether it did. Rows
// pulled ahead are dropped either way.
func (t *trainer) takeRowsAhead(sl []*api.Slice, step, epoch int64) bool {
	r := t.rec
	a := r.ahead
	r.ahead = nil
	if a == nil {
		return false
	}
	if a.at != (stepOfEpoch{step, epoch}) || !sameSlices(a.slices, sl) || a.gen != t.ps.Generation() {
		t.metrics.RowsPulled(metrics.RowsAheadUnused)
		return false
	}
	t.metrics.RowsPulled(metrics.RowsAhead)
	r.batch, r.spare = r.spare, r.batch
	return true
}
