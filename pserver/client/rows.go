package client

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"slices"

	"golang.org/x/sync/errgroup"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/gtrain/gtrain/api"
	"github.com/gtrain/gtrain/model"
	"github.com/gtrain/gtrain/pserver/wire"
)

// RowOwner is the pserver (of n) that holds row id of table: a hash of
// (table, id), so rows spread evenly whatever their ids, and any process
// finds the same owner.
func RowOwner(table string, id uint64, n int) int {
	h := fnv.New64a()
	h.Write([]byte(table))
	return int(Mix64(h.Sum64()^id) % uint64(n))
}

// Mix64 is SplitMix64's finalizer: a bijection that spreads every bit of x
// over all 64, so that ids close together land far apart (a row's owner,
// a row's initial values).
func Mix64(x uint64) uint64 {
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// byOwner splits the positions of ids by owning pserver.
func (c *Client) byOwner(table string, ids []uint64) [][]int {
	at := make([][]int, len(c.servers))
	for i, id := range ids {
		o := RowOwner(table, id, len(c.servers))
		at[o] = append(at[o], i)
	}
	return at
}

// PullRows fills dst (len(ids)*dim) with the rows ids of table, each from
// the pserver that owns it, once every one has applied minStep steps.
func (c *Client) PullRows(ctx context.Context, table string, ids []uint64, dim int, minStep, rollbackEpoch int64, dst []float32) error {
	if len(dst) != len(ids)*dim {
		return fmt.Errorf("pull rows of %s: %d floats for %d rows of %d", table, len(dst), len(ids), dim)
	}
	at := c.byOwner(table, ids)
	return c.eachServer(ctx, func(ctx context.Context, i int) error {
		if len(at[i]) == 0 {
			return nil
		}
		mine := pick(ids, at[i])
		reply, err := c.servers[i].PullRows(ctx, &api.RowsRequest{Table: table, Ids: mine, MinStep: minStep, Epoch: rollbackEpoch})
		if err != nil {
			return fmt.Errorf("pull rows of %s from pserver %d: %w", table, i, err)
		}
		return scatter(dst, at[i], reply.Data, dim, table, i)
	})
}

// PushRows sends one micro-batch's row gradient sums of table (grad holds
// len(ids)*dim floats) to the pservers that own the rows. In sync mode
// call it before the micro-batch's dense push, which applies them.
func (c *Client) PushRows(ctx context.Context, microBatch int, step, rollbackEpoch, records int64, table string, ids []uint64, dim int, grad []float32) error {
	if len(grad) != len(ids)*dim {
		return fmt.Errorf("push rows of %s: %d floats for %d rows of %d", table, len(grad), len(ids), dim)
	}
	at := c.byOwner(table, ids)
	return c.eachServer(ctx, func(ctx context.Context, i int) error {
		if len(at[i]) == 0 {
			return nil
		}
		req := &api.RowsPush{TrainerId: int32(microBatch), Step: step, Records: records, Epoch: rollbackEpoch, Table: table,
			Ids: pick(ids, at[i]), Data: gather(grad, at[i], dim)}
		if _, err := c.servers[i].PushRows(ctx, req); err != nil {
			return fmt.Errorf("push rows of %s to pserver %d: %w", table, i, err)
		}
		return nil
	})
}

// PullBatchRows fills the rows of every id field of b (field i's table is
// tables[i]) from the pservers, as of minStep: one call a pserver for all
// the fields (PullTablesRows, as many as packCalls makes), the pservers'
// calls at once.
func (c *Client) PullBatchRows(ctx context.Context, tables []model.RecTable, b *model.RecBatch, minStep, rollbackEpoch int64) error {
	for i := range b.Fields {
		b.Fields[i].SizeRows(tables[i].Dim)
	}
	at := c.fieldsByOwner(tables, b)
	return c.eachServer(ctx, func(ctx context.Context, s int) error {
		var reqs []*api.RowsRequest
		var fields []int
		for i, t := range tables {
			if len(at[i][s]) > 0 {
				reqs = append(reqs, &api.RowsRequest{Table: t.Field, Ids: pick(b.Fields[i].IDs, at[i][s]), MinStep: minStep, Epoch: rollbackEpoch})
				fields = append(fields, i)
			}
		}
		for _, call := range packCalls(fields, tables, at, s) {
			req := &api.TablesRowsRequest{Tables: reqs[call[0]:call[1]]}
			reply, err := c.pullTables(ctx, s, req)
			if err != nil {
				return fmt.Errorf("pull rows of %d tables from pserver %d: %w", len(req.Tables), s, err)
			}
			if len(reply.Tables) != len(req.Tables) {
				return fmt.Errorf("pull rows of %d tables from pserver %d: %d answered", len(req.Tables), s, len(reply.Tables))
			}
			for k, i := range fields[call[0]:call[1]] {
				if err := scatter(b.Fields[i].Rows, at[i][s], reply.Tables[k].Data, tables[i].Dim, tables[i].Field, s); err != nil {
					return err
				}
			}
		}
		return nil
	})
}

// PushBatchRows sends the row gradients of every id field of b (rows[i]
// for field i) as micro-batch microBatch of step: one call a pserver for
// all the fields (PushTablesRows, as many as packCalls makes), the
// pservers' calls at once. A pserver keeps a micro-batch's rows per table
// until its dense push and applies the tables in their declared order, so
// no order of arrival changes a bit.
func (c *Client) PushBatchRows(ctx context.Context, microBatch int, step, rollbackEpoch, records int64, tables []model.RecTable, b *model.RecBatch, rows [][]float32) error {
	h := pushHeader{trainer: int32(microBatch), step: step, rollbackEpoch: rollbackEpoch, records: records,
		batch: &batchRows{tables: tables, b: b, rows: rows}}
	if err := c.placeRows(h.batch); err != nil {
		return err
	}
	return c.eachServer(ctx, func(ctx context.Context, s int) error {
		applied, err := c.pushRowsTo(ctx, s, h.rowCalls(s))
		if applied {
			return status.Error(codes.AlreadyExists, "push rows: the step is applied with this micro-batch in it")
		}
		return err
	})
}

// packCalls cuts the tables of fields (their rows owned by pserver s, at)
// into calls within the wire's limits, in order, as [lo, hi) ranges of
// fields: a call ends before the table that would take it past
// wire.RowsCallBytes of ids and values, wire.MaxRowsPerCall ids or
// wire.MaxTablesPerCall tables; a table past them on its own goes alone,
// as it did in a call of its own.
func packCalls(fields []int, tables []model.RecTable, at [][][]int, s int) [][2]int {
	var calls [][2]int
	lo, bytes, ids := 0, 0, 0
	for k, i := range fields {
		n := len(at[i][s])
		size := n*(8+4*tables[i].Dim) + len(tables[i].Field)
		if k > lo && (bytes+size > wire.RowsCallBytes || ids+n > wire.MaxRowsPerCall || k-lo == wire.MaxTablesPerCall) {
			calls = append(calls, [2]int{lo, k})
			lo, bytes, ids = k, 0, 0
		}
		bytes, ids = bytes+size, ids+n
	}
	if lo < len(fields) {
		calls = append(calls, [2]int{lo, len(fields)})
	}
	return calls
}

// olderFor is how many calls of several tables' rows a pserver that
// answered one Unimplemented (an older build) gets a table at a time
// before it is asked again: one upgraded in place, at the same address,
// keeps its Client.
const olderFor = 1000

// batched says whether pserver s gets a call of several tables' rows now:
// not while it counts down from an Unimplemented answer (older).
func (c *Client) batched(s int) bool { return countDown(&c.older[s]) }

// pullTables is one PullTablesRows to pserver s, or, to a pserver of an
// older build (it answered Unimplemented), a PullRows a table at once.
func (c *Client) pullTables(ctx context.Context, s int, req *api.TablesRowsRequest) (*api.TablesRowsReply, error) {
	if c.batched(s) {
		reply, err := c.servers[s].PullTablesRows(ctx, req)
		if status.Code(err) != codes.Unimplemented {
			return reply, err
		}
		c.older[s].Store(olderFor)
	}
	reply := &api.TablesRowsReply{Tables: make([]*api.RowsReply, len(req.Tables))}
	return reply, eachTable(ctx, len(req.Tables), func(ctx context.Context, k int) (err error) {
		reply.Tables[k], err = c.servers[s].PullRows(ctx, req.Tables[k])
		return err
	})
}

// pushTables is pullTables for a push: PushTablesRows, or a PushRows a
// table at once.
func (c *Client) pushTables(ctx context.Context, s int, req *api.TablesRowsPush) error {
	if c.batched(s) {
		_, err := c.servers[s].PushTablesRows(ctx, req)
		if status.Code(err) != codes.Unimplemented {
			return err
		}
		c.older[s].Store(olderFor)
	}
	return eachTable(ctx, len(req.Tables), func(ctx context.Context, k int) error {
		_, err := c.servers[s].PushRows(ctx, req.Tables[k])
		return err
	})
}

// eachTable calls fn for each of n tables at once (16 at most) and
// returns the first error. A server that answers neither form (another gRPC server at a dead
// pserver's address) fails with Unimplemented, which PeerGone reads as
// gone.
func eachTable(ctx context.Context, n int, fn func(ctx context.Context, k int) error) error {
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(16) // a connection serves 64 streams (wire.maxStreams); leave the rest to the step's other calls
	for k := range n {
		g.Go(func() error { return fn(gctx, k) })
	}
	return g.Wait()
}

// fieldsByOwner is, for each id field of b (field i's table tables[i]),
// the positions of its ids by owning pserver.
func (c *Client) fieldsByOwner(tables []model.RecTable, b *model.RecBatch) [][][]int {
	at := make([][][]int, len(tables))
	for i, t := range tables {
		at[i] = c.byOwner(t.Field, b.Fields[i].IDs)
	}
	return at
}

// scatter copies the rows pserver s answered for table (data: dim floats
// each, in at's order) to their positions at in dst, once they are as
// many as asked for.
func scatter(dst []float32, at []int, data []byte, dim int, table string, s int) error {
	vals, err := model.BytesFloat32(data)
	if err != nil || len(vals) != len(at)*dim {
		return fmt.Errorf("pull rows of %s from pserver %d: %d floats for %d rows of %d (%v)", table, s, len(vals), len(at), dim, err)
	}
	for k, pos := range at {
		copy(dst[pos*dim:(pos+1)*dim], vals[k*dim:(k+1)*dim])
	}
	return nil
}

// gather is the rows of grad (dim floats each) at positions at, as the
// bytes of a push.
func gather(grad []float32, at []int, dim int) []byte {
	out := make([]byte, 0, 4*dim*len(at))
	for _, pos := range at {
		out = append(out, model.Float32Bytes(grad[pos*dim:(pos+1)*dim])...)
	}
	return out
}

// pick is ids at positions at.
func pick(ids []uint64, at []int) []uint64 {
	out := make([]uint64, len(at))
	for k, pos := range at {
		out[k] = ids[pos]
	}
	return out
}

// ExportRows gathers every row of table the pservers store (dim values
// each), once each applied minStep steps, sorted by id: the same bytes
// whatever the pserver count.
func (c *Client) ExportRows(ctx context.Context, table string, dim int, minStep, rollbackEpoch int64) ([]uint64, []float32, error) {
	parts := make([]struct {
		ids  []uint64
		vals []float32
	}, len(c.servers))
	err := c.eachServer(ctx, func(ctx context.Context, i int) error {
		stream, err := c.servers[i].ExportRows(ctx, &api.RowsRequest{Table: table, MinStep: minStep, Epoch: rollbackEpoch})
		if err != nil {
			return fmt.Errorf("export rows of %s from pserver %d: %w", table, i, err)
		}
		for {
			msg, err := stream.Recv()
			if errors.Is(err, io.EOF) {
				return nil
			}
			if err != nil {
				return fmt.Errorf("export rows of %s from pserver %d: %w", table, i, err)
			}
			vals, err := model.BytesFloat32(msg.Data)
			if err != nil || len(vals) != len(msg.Ids)*dim {
				return fmt.Errorf("export rows of %s from pserver %d: %d floats for %d rows of %d (%v)", table, i, len(vals), len(msg.Ids), dim, err)
			}
			parts[i].ids, parts[i].vals = append(parts[i].ids, msg.Ids...), append(parts[i].vals, vals...)
		}
	})
	if err != nil {
		return nil, nil, err
	}
	type row struct {
		id   uint64
		vals []float32
	}
	var rows []row
	for _, p := range parts {
		for k, id := range p.ids {
			rows = append(rows, row{id, p.vals[k*dim : (k+1)*dim]})
		}
	}
	slices.SortFunc(rows, func(a, b row) int { return cmp.Compare(a.id, b.id) })
	ids, vals := make([]uint64, len(rows)), make([]float32, 0, len(rows)*dim)
	for k, r := range rows {
		ids[k], vals = r.id, append(vals, r.vals...)
	}
	return ids, vals, nil
}
