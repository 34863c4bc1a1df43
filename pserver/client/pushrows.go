package client

import (
	"context"
	"fmt"
	"sync/atomic"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/gtrain/gtrain/api"
	"github.com/gtrain/gtrain/model"
	"github.com/gtrain/gtrain/pserver/wire"
)

// Rows makes a push carry a micro-batch's embedding row gradients (rows[i]
// for id field i of b, table tables[i]): each pserver gets the rows it owns
// before its dense push, as PushBatchRows would send them. A push puts a
// pserver's rows in its stream's first message (PServer.PushPullRows,
// PServer.PushWithRows) when they fit one call of wire.RowsCallBytes: one
// round trip a step fewer. A pserver of an older build and rows past that
// get calls of their own first.
func Rows(tables []model.RecTable, b *model.RecBatch, rows [][]float32) PushOption {
	return func(h *pushHeader) { h.batch = &batchRows{tables: tables, b: b, rows: rows} }
}

// batchRows is a micro-batch's row gradients (Rows), and where each
// table's ids are by owning pserver (at, placeRows).
type batchRows struct {
	tables []model.RecTable
	b      *model.RecBatch
	rows   [][]float32
	at     [][][]int
}

// placeRows checks r's gradients against its batch and finds each id's
// pserver.
func (c *Client) placeRows(r *batchRows) error {
	for i, t := range r.tables {
		if len(r.rows[i]) != len(r.b.Fields[i].IDs)*t.Dim {
			return fmt.Errorf("push rows of %s: %d floats for %d rows of %d", t.Field, len(r.rows[i]), len(r.b.Fields[i].IDs), t.Dim)
		}
	}
	r.at = c.fieldsByOwner(r.tables, r.b)
	return nil
}

// rowCalls is pserver s's share of h's rows cut into calls (packCalls),
// each row push stamped with h's micro-batch, step, records and epoch;
// none when h has no rows or s owns none of them.
func (h pushHeader) rowCalls(s int) []*api.TablesRowsPush {
	r := h.batch
	if r == nil {
		return nil
	}
	var reqs []*api.RowsPush
	var fields []int
	for i, t := range r.tables {
		if len(r.at[i][s]) == 0 {
			continue
		}
		reqs = append(reqs, &api.RowsPush{TrainerId: h.trainer, Step: h.step, Records: h.records, Epoch: h.rollbackEpoch, Table: t.Field,
			Ids: pick(r.b.Fields[i].IDs, r.at[i][s]), Data: gather(r.rows[i], r.at[i][s], t.Dim)})
		fields = append(fields, i)
	}
	var calls []*api.TablesRowsPush
	for _, call := range packCalls(fields, r.tables, r.at, s) {
		calls = append(calls, &api.TablesRowsPush{Tables: reqs[call[0]:call[1]]})
	}
	return calls
}

// pushRowsTo sends calls to pserver s one after the other. applied says
// that the pserver answered AlreadyExists: the step is applied with this
// micro-batch in it, as its dense push would say too.
func (c *Client) pushRowsTo(ctx context.Context, s int, calls []*api.TablesRowsPush) (applied bool, err error) {
	for _, req := range calls {
		err := c.pushTables(ctx, s, req)
		if status.Code(err) == codes.AlreadyExists {
			return true, nil
		}
		if err != nil {
			return false, fmt.Errorf("push rows of %d tables to pserver %d: %w", len(req.Tables), s, err)
		}
	}
	return false, nil
}

// pushPullRowsTo is the PushPull of a push with rows (Rows): pserver i's
// rows ride in the first message of a PushPullRows (rideFirst); else they
// go first in calls of their own, then the PushPull.
func (c *Client) pushPullRowsTo(ctx context.Context, i int, h pushHeader, grads, params [][]float32, ack func()) (step int64, got bool, err error) {
	calls := h.rowCalls(i)
	if rode, err := rideFirst(&c.olderRows[i], h, calls, func(hr pushHeader) (err error) {
		step, got, err = c.pushPullVia(ctx, i, c.servers[i].PushPullRows, hr, grads, params, ack)
		return err
	}); rode {
		return step, got, err
	}
	applied, err := c.pushRowsTo(ctx, i, calls)
	if err != nil || applied {
		return 0, false, err
	}
	return c.pushPullVia(ctx, i, c.servers[i].PushPull, h, grads, params, ack)
}

// rideFirst sends a push whose first message carries a pserver's row calls
// (push, given h with them as its carry) when they ride (rowsRide) and the
// pserver is not counted as older (older, countDown); rode says that push
// answered, with err. A pserver that answered Unimplemented took nothing:
// it is counted older for olderFor pushes, and the caller makes the two
// calls.
func rideFirst(older *atomic.Int64, h pushHeader, calls []*api.TablesRowsPush, push func(pushHeader) error) (rode bool, err error) {
	if !rowsRide(calls) || !countDown(older) {
		return false, nil
	}
	h.carry = calls[0]
	if err := push(h); status.Code(err) != codes.Unimplemented {
		return true, err
	}
	older.Store(olderFor)
	return false, nil
}

// rowsRide says whether a pserver's row calls may ride in its push's first
// message: one call, unless it is a table past wire.RowsCallBytes alone
// (packCalls), which with a message's data could pass the message limit.
func rowsRide(calls []*api.TablesRowsPush) bool {
	return len(calls) == 1 && proto.Size(calls[0]) <= wire.RowsCallBytes
}

// countDown says whether a pserver gets the newer call now: not while its
// counter (set to olderFor by an Unimplemented answer) counts down.
func countDown(older *atomic.Int64) bool {
	if older.Load() <= 0 {
		return true
	}
	older.Add(-1)
	return false
}

// RowsIn is what a Rows option among opts carries (nils when none): for
// stand-ins of a Client, which see its options only as functions.
func RowsIn(opts []PushOption) ([]model.RecTable, *model.RecBatch, [][]float32) {
	var h pushHeader
	for _, o := range opts {
		o(&h)
	}
	if h.batch == nil {
		return nil, nil, nil
	}
	return h.batch.tables, h.batch.b, h.batch.rows
}
