package client

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"slices"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

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
		mine := pick(ids, at[i])
		reply, err := c.servers[i].PullRows(ctx, &api.RowsRequest{Table: table, Ids: mine, MinStep: minStep, Epoch: rollbackEpoch})
		if err != nil {
			return fmt.Errorf("pull rows of %s from pserver %d: %w", table, i, err)
		}
		vals, err := model.BytesFloat32(reply.Data)
		if err != nil || len(vals) != len(mine)*dim {
			return fmt.Errorf("pull rows of %s from pserver %d: %d floats for %d rows of %d (%v)", table, i, len(vals), len(mine), dim, err)
		}
		scatter(dst, at[i], vals, dim)
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
			Ids: pick(ids, at[i]), Data: make([]byte, 0, 4*dim*len(at[i]))}
		for _, pos := range at[i] {
			req.Data = append(req.Data, model.Float32Bytes(grad[pos*dim:(pos+1)*dim])...)
		}
		if _, err := c.servers[i].PushRows(ctx, req); err != nil {
			return fmt.Errorf("push rows of %s to pserver %d: %w", table, i, err)
		}
		return nil
	})
}

// PullBatchRows fills the rows of every id field of b (field i's table is
// tables[i]) from the pservers, as of minStep: one call a pserver for all
// the fields (PullTablesRows), the pservers' calls at once.
func (c *Client) PullBatchRows(ctx context.Context, tables []model.RecTable, b *model.RecBatch, minStep, rollbackEpoch int64) error {
	for i := range b.Fields {
		b.Fields[i].SizeRows(tables[i].Dim)
	}
	at := c.fieldsByOwner(tables, b)
	return c.eachServer(ctx, func(ctx context.Context, s int) error {
		req, fields := &api.TablesRowsRequest{}, make([]int, 0, len(tables))
		for i, t := range tables {
			if len(at[i][s]) > 0 {
				req.Tables = append(req.Tables, &api.RowsRequest{Table: t.Field, Ids: pick(b.Fields[i].IDs, at[i][s]), MinStep: minStep, Epoch: rollbackEpoch})
				fields = append(fields, i)
			}
		}
		if len(fields) == 0 {
			return nil
		}
		reply, err := c.servers[s].PullTablesRows(ctx, req)
		if status.Code(err) == codes.Unimplemented {
			reply, err = c.pullTablesEach(ctx, s, req) // a pserver of an older build
		}
		if err != nil {
			return fmt.Errorf("pull rows of %d tables from pserver %d: %w", len(fields), s, err)
		}
		if len(reply.Tables) != len(fields) {
			return fmt.Errorf("pull rows of %d tables from pserver %d: %d answered", len(fields), s, len(reply.Tables))
		}
		for k, i := range fields {
			t, f := tables[i], &b.Fields[i]
			vals, err := model.BytesFloat32(reply.Tables[k].Data)
			if err != nil || len(vals) != len(at[i][s])*t.Dim {
				return fmt.Errorf("pull rows of %s from pserver %d: %d floats for %d rows of %d (%v)", t.Field, s, len(vals), len(at[i][s]), t.Dim, err)
			}
			scatter(f.Rows, at[i][s], vals, t.Dim)
		}
		return nil
	})
}

// PushBatchRows sends the row gradients of every id field of b (rows[i]
// for field i) as micro-batch microBatch of step: one call a pserver for
// all the fields (PushTablesRows), the pservers' calls at once. A pserver
// keeps a micro-batch's rows per table until its dense push and applies
// the tables in their declared order, so no order of arrival changes a bit.
func (c *Client) PushBatchRows(ctx context.Context, microBatch int, step, rollbackEpoch, records int64, tables []model.RecTable, b *model.RecBatch, rows [][]float32) error {
	for i, t := range tables {
		if len(rows[i]) != len(b.Fields[i].IDs)*t.Dim {
			return fmt.Errorf("push rows of %s: %d floats for %d rows of %d", t.Field, len(rows[i]), len(b.Fields[i].IDs), t.Dim)
		}
	}
	at := c.fieldsByOwner(tables, b)
	return c.eachServer(ctx, func(ctx context.Context, s int) error {
		req := &api.TablesRowsPush{}
		for i, t := range tables {
			if len(at[i][s]) == 0 {
				continue
			}
			r := &api.RowsPush{TrainerId: int32(microBatch), Step: step, Records: records, Epoch: rollbackEpoch, Table: t.Field,
				Ids: pick(b.Fields[i].IDs, at[i][s]), Data: make([]byte, 0, 4*t.Dim*len(at[i][s]))}
			for _, pos := range at[i][s] {
				r.Data = append(r.Data, model.Float32Bytes(rows[i][pos*t.Dim:(pos+1)*t.Dim])...)
			}
			req.Tables = append(req.Tables, r)
		}
		if len(req.Tables) == 0 {
			return nil
		}
		_, err := c.servers[s].PushTablesRows(ctx, req)
		if status.Code(err) == codes.Unimplemented {
			err = c.pushTablesEach(ctx, s, req) // a pserver of an older build
		}
		if err != nil {
			return fmt.Errorf("push rows of %d tables to pserver %d: %w", len(req.Tables), s, err)
		}
		return nil
	})
}

// pullTablesEach is PullTablesRows for a pserver of a build before it:
// one PullRows a table, in order. A server that answers neither (another
// gRPC server at a dead pserver's address) fails with Unimplemented, which
// PeerGone reads as gone.
func (c *Client) pullTablesEach(ctx context.Context, s int, req *api.TablesRowsRequest) (*api.TablesRowsReply, error) {
	reply := &api.TablesRowsReply{Tables: make([]*api.RowsReply, len(req.Tables))}
	for k, r := range req.Tables {
		var err error
		if reply.Tables[k], err = c.servers[s].PullRows(ctx, r); err != nil {
			return nil, err
		}
	}
	return reply, nil
}

// pushTablesEach is PushTablesRows for a pserver of a build before it: one
// PushRows a table, in order.
func (c *Client) pushTablesEach(ctx context.Context, s int, req *api.TablesRowsPush) error {
	for _, r := range req.Tables {
		if _, err := c.servers[s].PushRows(ctx, r); err != nil {
			return err
		}
	}
	return nil
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

// scatter copies rows vals (dim floats each, in at's order) to their
// positions at in dst.
func scatter(dst []float32, at []int, vals []float32, dim int) {
	for k, pos := range at {
		copy(dst[pos*dim:(pos+1)*dim], vals[k*dim:(k+1)*dim])
	}
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
