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

	"github.com/gtrain/gtrain/api"
	"github.com/gtrain/gtrain/model"
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
		mine := make([]uint64, len(at[i]))
		for k, pos := range at[i] {
			mine[k] = ids[pos]
		}
		reply, err := c.servers[i].PullRows(ctx, &api.RowsRequest{Table: table, Ids: mine, MinStep: minStep, Epoch: rollbackEpoch})
		if err != nil {
			return fmt.Errorf("pull rows of %s from pserver %d: %w", table, i, err)
		}
		vals, err := model.BytesFloat32(reply.Data)
		if err != nil || len(vals) != len(mine)*dim {
			return fmt.Errorf("pull rows of %s from pserver %d: %d floats for %d rows of %d (%v)", table, i, len(vals), len(mine), dim, err)
		}
		for k, pos := range at[i] {
			copy(dst[pos*dim:(pos+1)*dim], vals[k*dim:(k+1)*dim])
		}
		return nil
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
			Ids: make([]uint64, len(at[i])), Data: make([]byte, 0, 4*dim*len(at[i]))}
		for k, pos := range at[i] {
			req.Ids[k] = ids[pos]
			req.Data = append(req.Data, model.Float32Bytes(grad[pos*dim:(pos+1)*dim])...)
		}
		if _, err := c.servers[i].PushRows(ctx, req); err != nil {
			return fmt.Errorf("push rows of %s to pserver %d: %w", table, i, err)
		}
		return nil
	})
}

// PullBatchRows fills the rows of every id field of b (field i's table is
// tables[i]) from the pservers, as of minStep: the fields' calls at once
// (eachField).
func (c *Client) PullBatchRows(ctx context.Context, tables []model.RecTable, b *model.RecBatch, minStep, rollbackEpoch int64) error {
	for i := range b.Fields {
		b.Fields[i].SizeRows(tables[i].Dim)
	}
	return eachField(ctx, len(b.Fields), func(ctx context.Context, i int) error {
		f, t := &b.Fields[i], tables[i]
		return c.PullRows(ctx, t.Field, f.IDs, t.Dim, minStep, rollbackEpoch, f.Rows)
	})
}

// PushBatchRows sends the row gradients of every id field of b (rows[i]
// for field i) as micro-batch microBatch of step, the fields' calls at
// once (eachField): a pserver keeps a micro-batch's rows per table until
// its dense push and applies the tables in their declared order, so the
// order the calls arrive in changes no bit.
func (c *Client) PushBatchRows(ctx context.Context, microBatch int, step, rollbackEpoch, records int64, tables []model.RecTable, b *model.RecBatch, rows [][]float32) error {
	return eachField(ctx, len(tables), func(ctx context.Context, i int) error {
		t := tables[i]
		return c.PushRows(ctx, microBatch, step, rollbackEpoch, records, t.Field, b.Fields[i].IDs, t.Dim, rows[i])
	})
}

// eachField calls fn for each of n id fields concurrently and returns the
// first error. One call per field in turn made a step of the recommender
// (7 id fields) 14 round trips on top of its dense push and report; at
// once they cost about one (bench recommender).
func eachField(ctx context.Context, n int, fn func(ctx context.Context, i int) error) error {
	if n == 1 {
		return fn(ctx, 0)
	}
	g, gctx := errgroup.WithContext(ctx)
	for i := range n {
		g.Go(func() error { return fn(gctx, i) })
	}
	return g.Wait()
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
