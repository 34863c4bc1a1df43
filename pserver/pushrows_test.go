package pserver

import (
	"context"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/gtrain/gtrain/api"
	"github.com/gtrain/gtrain/model"
	"github.com/gtrain/gtrain/pserver/client"
	"github.com/gtrain/gtrain/pserver/wire"
)

// PushPullRows counts the pushes that carried their rows, or, if older,
// answers Unimplemented having read nothing, as a pserver of a build
// before the method.
func (r *rowCalls) PushPullRows(stream api.PServer_PushPullRowsServer) error {
	if r.older.Load() {
		r.refusedRides.Add(1)
		return status.Error(codes.Unimplemented, "unknown method PushPullRows")
	}
	r.rides.Add(1)
	return r.Server.PushPullRows(stream)
}

// TestRowsRideInThePushPull: a sync push with its micro-batch's rows
// (client.Rows), micro-batches in the order 2, 0, 1 over real gRPC, gives
// each pserver the rows it owns in its PushPull's first message and no
// call of their own, and the rows pulled back have the bits of reference
// tables given the pushes in micro-batch order. Pservers of an older
// build refuse the first such push each (having taken nothing), then get
// the rows in calls of their own before the PushPull: the same bits.
func TestRowsRideInThePushPull(t *testing.T) {
	tables, ids, uids := twoTables, twoTablesIDs, twoTablesUIDs
	for _, older := range []bool{false, true} {
		_, c, calls := rowsClusterOf(t, []TableConfig{movieTable, userTable}, older)
		ctx := context.Background()
		params := [][]float32{make([]float32, 4)}
		var pushed [][][]uint64
		for _, mb := range []int{2, 0, 1} {
			b := &model.RecBatch{Fields: []model.RecField{{IDs: rowIDs[mb]}, {IDs: userIDs[mb]}}}
			grads := [][]float32{{0.5, 0.5, 0.5, 0.5}}
			rows := client.Rows(tables, b, [][]float32{rowGrads[mb], userGrads[mb]})
			if _, err := c.PushPull(ctx, mb, 0, 0, rowRecs[mb], false, grads, params, nil, rows); err != nil {
				t.Fatalf("older build %v: push of micro-batch %d: %v", older, mb, err)
			}
			pushed = append(pushed, [][]uint64{rowIDs[mb], userIDs[mb]})
		}
		var rides, refused, ownCalls int64
		for _, s := range calls {
			rides, refused = rides+s.rides.Load(), refused+s.refusedRides.Load()
			ownCalls += s.tables.Load() + s.pushes.Load()
		}
		carrying, _, servers := rowCallsOf(pushed, tables, 2)
		if !older && (rides != carrying || refused != 0 || ownCalls != 0) {
			t.Fatalf("%d pushes carried their rows, %d refused, %d calls of rows of their own; want %d, 0, 0", rides, refused, ownCalls, carrying)
		}
		if older && (rides != 0 || refused != servers || ownCalls == 0) {
			t.Fatalf("older build: %d pushes carried their rows, %d refused, %d calls of rows of their own; want 0, %d (once a pserver), some",
				rides, refused, ownCalls, servers)
		}
		b := &model.RecBatch{Fields: []model.RecField{{IDs: ids}, {IDs: uids}}}
		if err := c.PullBatchRows(ctx, tables, b, 1, 0); err != nil {
			t.Fatal(err)
		}
		checkTwoTables(t, older, b)
	}
}

// TestRowsPastOneCallGoFirst: a pserver's rows past wire.RowsCallBytes (one
// table's, which packCalls sends alone) do not ride in the first message
// of the PushPull, where the message's data could take them past the
// message limit: they go in a call of their own first, and the push
// succeeds; the next micro-batch's few rows ride.
func TestRowsPastOneCallGoFirst(t *testing.T) {
	wide := TableConfig{Name: "wide", Dim: 16, Seed: 3, Optimizer: movieTable.Optimizer}
	tables := []model.RecTable{{Field: "wide", Dim: 16}}
	_, c, calls := rowsClusterOf(t, []TableConfig{wide}, false)
	n := 2 * (wire.RowsCallBytes/(8+4*16) + 2000) // past one call on each pserver
	ids, grad := make([]uint64, n), make([]float32, n*16)
	for i := range ids {
		ids[i], grad[i*16] = uint64(i)|1<<62, 1 // ids of 9 bytes on the wire, as a hash's would be
	}
	params := [][]float32{make([]float32, 4)}
	for mb, rows := range [][]uint64{ids, {1, 2, 3}, {4}} {
		b := &model.RecBatch{Fields: []model.RecField{{IDs: rows}}}
		opt := client.Rows(tables, b, [][]float32{grad[:len(rows)*16]})
		if _, err := c.PushPull(context.Background(), mb, 0, 0, 1, false, [][]float32{{1, 1, 1, 1}}, params, nil, opt); err != nil {
			t.Fatalf("push of micro-batch %d (%d rows): %v", mb, len(rows), err)
		}
		var rides, own int64
		for _, s := range calls {
			rides, own = rides+s.rides.Load(), own+s.tables.Load()
		}
		if mb == 0 && (rides != 0 || own != 2) {
			t.Fatalf("%d rows: %d pushes carried them, %d calls of their own; want 0 and 2 (one a pserver)", n, rides, own)
		}
		if mb > 0 && rides == 0 {
			t.Fatalf("micro-batch %d's %d rows rode in no push", mb, len(rows))
		}
	}
}
