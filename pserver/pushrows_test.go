package pserver

import (
	"context"
	"sync/atomic"
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
	return r.ride("PushPullRows", &r.rides, &r.refusedRides, func() error { return r.Server.PushPullRows(stream) })
}

// PushWithRows is PushPullRows's count for a plain Push.
func (r *rowCalls) PushWithRows(stream api.PServer_PushWithRowsServer) error {
	return r.ride("PushWithRows", &r.pushRides, &r.refusedPushRides, func() error { return r.Server.PushWithRows(stream) })
}

// Push and PushPull of an older pserver ignore a message's rows (field
// 11, which a build before PushPullRows did not know), counting them in
// carriedToOlder: a client that sent them there would lose them.
func (r *rowCalls) Push(stream api.PServer_PushServer) error {
	if r.older.Load() {
		stream = olderPush{stream, &r.carriedToOlder}
	}
	return r.Server.Push(stream)
}

func (r *rowCalls) PushPull(stream api.PServer_PushPullServer) error {
	if r.older.Load() {
		stream = olderPushPull{stream, &r.carriedToOlder}
	}
	return r.Server.PushPull(stream)
}

type olderPush struct {
	api.PServer_PushServer
	carried *atomic.Int64
}

func (o olderPush) RecvMsg(m any) error {
	return dropRows(o.PServer_PushServer.RecvMsg(m), m, o.carried)
}

type olderPushPull struct {
	api.PServer_PushPullServer
	carried *atomic.Int64
}

func (o olderPushPull) RecvMsg(m any) error {
	return dropRows(o.PServer_PushPullServer.RecvMsg(m), m, o.carried)
}

// dropRows drops the rows a received message m carried, counting it.
func dropRows(err error, m any, carried *atomic.Int64) error {
	if s, ok := m.(*pushSink); ok && s.rows != nil {
		carried.Add(1)
		s.rows = nil
	}
	return err
}

// ride serves a push that carries rows, counted in rides, or, if older,
// refuses it, counted in refused.
func (r *rowCalls) ride(method string, rides, refused *atomic.Int64, serve func() error) error {
	if r.older.Load() {
		refused.Add(1)
		return status.Error(codes.Unimplemented, "unknown method "+method)
	}
	rides.Add(1)
	return serve()
}

// TestRowsRideInThePushPull: a sync push with its micro-batch's rows
// (client.Rows), micro-batches in the order 2, 0, 1 over real gRPC, gives
// each pserver the rows it owns in its PushPull's first message and no
// call of their own, and the rows pulled back have the bits of reference
// tables given the pushes in micro-batch order. Pservers of an older
// build refuse the first such push each (having taken nothing), then get
// the rows in calls of their own before the PushPull: the same bits.
func TestRowsRideInThePushPull(t *testing.T) {
	rowsRideIn(t, func(int) bool { return false })
}

// TestRowsRideInThePush: the same, micro-batches 2 and 0 pushed by a plain
// Push (a push that does not bring back the next step's parameters:
// pull_with_push false) and 1 by a PushPull: their rows ride in the first message of a
// PushWithRows, or, to an older pserver, in calls of their own first.
func TestRowsRideInThePush(t *testing.T) {
	rowsRideIn(t, func(mb int) bool { return mb != 1 })
}

// rowsRideIn pushes micro-batches 2, 0 and 1 with their rows, by Push
// where plain says so and by PushPull where not, to new pservers and to
// older ones, and checks which calls carried the rows and the rows' bits.
func rowsRideIn(t *testing.T, plain func(mb int) bool) {
	tables, ids, uids := twoTables, twoTablesIDs, twoTablesUIDs
	for _, older := range []bool{false, true} {
		_, c, calls := rowsClusterOf(t, []TableConfig{movieTable, userTable}, older)
		ctx := context.Background()
		params := [][]float32{make([]float32, 4)}
		var pushed, pulled [][][]uint64
		for _, mb := range []int{2, 0, 1} {
			b := &model.RecBatch{Fields: []model.RecField{{IDs: rowIDs[mb]}, {IDs: userIDs[mb]}}}
			grads := [][]float32{{0.5, 0.5, 0.5, 0.5}}
			rows := client.Rows(tables, b, [][]float32{rowGrads[mb], userGrads[mb]})
			var err error
			if plain(mb) {
				err = c.Push(ctx, mb, 0, 0, rowRecs[mb], false, grads, rows)
				pushed = append(pushed, [][]uint64{rowIDs[mb], userIDs[mb]})
			} else {
				_, err = c.PushPull(ctx, mb, 0, 0, rowRecs[mb], false, grads, params, nil, rows)
				pulled = append(pulled, [][]uint64{rowIDs[mb], userIDs[mb]})
			}
			if err != nil {
				t.Fatalf("older build %v: push of micro-batch %d: %v", older, mb, err)
			}
		}
		var rides, pushRides, refused, ownCalls, lost int64
		for _, s := range calls {
			rides, pushRides = rides+s.rides.Load(), pushRides+s.pushRides.Load()
			refused += s.refusedRides.Load() + s.refusedPushRides.Load()
			ownCalls += s.tables.Load() + s.pushes.Load()
			lost += s.carriedToOlder.Load()
		}
		carrying, _, pullServers := rowCallsOf(pulled, tables, 2)
		pushCarrying, _, pushServers := rowCallsOf(pushed, tables, 2)
		if !older && (rides != carrying || pushRides != pushCarrying || refused != 0 || ownCalls != 0) {
			t.Fatalf("%d PushPulls and %d Pushes carried their rows, %d refused, %d calls of rows of their own; want %d, %d, 0, 0",
				rides, pushRides, refused, ownCalls, carrying, pushCarrying)
		}
		if older && (rides+pushRides != 0 || refused != pullServers+pushServers || ownCalls == 0 || lost != 0) {
			t.Fatalf("older build: %d pushes carried their rows, %d refused, %d calls of rows of their own, %d Push or PushPull messages with rows it ignores; want 0, %d (once a pserver and method), some, 0",
				rides+pushRides, refused, ownCalls, lost, pullServers+pushServers)
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
