package pserver

import (
	"context"
	"math"
	"net"
	"sync/atomic"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/gtrain/gtrain/api"
	"github.com/gtrain/gtrain/checkpoint"
	"github.com/gtrain/gtrain/internal/jobauth"
	"github.com/gtrain/gtrain/jobspec"
	"github.com/gtrain/gtrain/model"
	"github.com/gtrain/gtrain/pserver/client"
	"github.com/gtrain/gtrain/pserver/wire"
)

var movieTable = TableConfig{Name: "movie", Dim: 3, Seed: 5, Optimizer: OptimizerConfig{Kind: OptimizerAdagrad, LearningRate: 0.1}.WithDefaults()}

// rowsCluster serves two sync shards of 3 micro-batches, each with the
// movie table, over real gRPC, and returns them and a client of both.
func rowsCluster(t *testing.T) ([]*Shard, *client.Client) {
	t.Helper()
	shards, c, _ := rowsClusterOf(t, []TableConfig{movieTable}, false)
	return shards, c
}

// rowsClusterOf is rowsCluster with tables, whose servers count the row
// calls they answer and, if older, answer the calls of several tables
// Unimplemented, as a pserver of a build before them.
func rowsClusterOf(t *testing.T, tables []TableConfig, older bool) ([]*Shard, *client.Client, []*rowCalls) {
	t.Helper()
	blocks, err := client.Partition([]int{4}, 2, 2)
	if err != nil {
		t.Fatal(err)
	}
	var shards []*Shard
	var addrs []string
	var calls []*rowCalls
	for i := range 2 {
		s, err := NewShard(ShardConfig{Mode: jobspec.ModeSync, MicroBatches: 3, Blocks: client.BlocksOf(blocks, i),
			Optimizer: movieTable.Optimizer, Tables: tables}, nil)
		if err != nil {
			t.Fatal(err)
		}
		lis, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		srv := grpc.NewServer(wire.ServerOptions()...)
		calls = append(calls, &rowCalls{Server: NewServer(i, s, nil, nil)})
		calls[i].older.Store(older)
		api.RegisterPServerServer(srv, calls[i])
		go func() { _ = srv.Serve(lis) }()
		t.Cleanup(srv.Stop)
		shards, addrs = append(shards, s), append(addrs, lis.Addr().String())
	}
	c, err := client.NewClient(addrs, blocks, jobauth.Dial{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return shards, c, calls
}

// rowCalls is a pserver that counts the row calls it answers: per table
// (PullRows, PushRows) and for several tables (PullTablesRows,
// PushTablesRows), which, if older, it answers Unimplemented.
type rowCalls struct {
	*Server
	older                          atomic.Bool
	pulls, pushes, tables, refused atomic.Int64
	rides, refusedRides            atomic.Int64 // PushPullRows (pushrows_test.go)
	pushRides, refusedPushRides    atomic.Int64 // PushWithRows
	carriedToOlder                 atomic.Int64 // messages with rows to an older Push or PushPull
}

func (r *rowCalls) PullRows(ctx context.Context, req *api.RowsRequest) (*api.RowsReply, error) {
	r.pulls.Add(1)
	return r.Server.PullRows(ctx, req)
}

func (r *rowCalls) PushRows(ctx context.Context, req *api.RowsPush) (*api.PushReply, error) {
	r.pushes.Add(1)
	return r.Server.PushRows(ctx, req)
}

func (r *rowCalls) PullTablesRows(ctx context.Context, req *api.TablesRowsRequest) (*api.TablesRowsReply, error) {
	if err := r.severalTables("PullTablesRows"); err != nil {
		return nil, err
	}
	return r.Server.PullTablesRows(ctx, req)
}

func (r *rowCalls) PushTablesRows(ctx context.Context, req *api.TablesRowsPush) (*api.PushReply, error) {
	if err := r.severalTables("PushTablesRows"); err != nil {
		return nil, err
	}
	return r.Server.PushTablesRows(ctx, req)
}

// severalTables counts a call of several tables, refused if older.
func (r *rowCalls) severalTables(method string) error {
	if r.older.Load() {
		r.refused.Add(1)
		return status.Error(codes.Unimplemented, "unknown method "+method)
	}
	r.tables.Add(1)
	return nil
}

// densePushes completes step 0 of every shard: micro-batches in order,
// records[mb] records each.
func densePushes(t *testing.T, shards []*Shard, records []int64, order ...int) {
	t.Helper()
	for _, s := range shards {
		for _, mb := range order {
			if _, _, err := s.Push(grad(s, mb, 0, records[mb], func(int, int) float32 { return 0.5 })); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// The rows of every micro-batch name id 7; the values make the sum's
// bits depend on the order it is taken in.
var (
	rowIDs   = [][]uint64{{7, 1 << 40, 3}, {7, 11}, {3, 7, 12345678901}}
	rowGrads = [][]float32{{1e8, 0, 0, 1, 2, 3, 1, 1, 1}, {1, 1, 1, 5, 5, 5}, {2, 2, 2, -1e8, 3, 0, 0.5, 0.5, 0.5}}
	rowRecs  = []int64{3, 2, 4}
)

// TestRowsThroughGRPCAppliedInMicroBatchOrder: row gradients pushed over
// gRPC in the order 2, 0, 1, each to the pserver owning the row, are
// applied with their micro-batch's dense push, summed in micro-batch
// order: the rows pulled back have the bits of a table given the pushes
// in order 0, 1, 2 (and not those of the arrival order).
func TestRowsThroughGRPCAppliedInMicroBatchOrder(t *testing.T) {
	shards, c := rowsCluster(t)
	ctx := context.Background()
	for _, mb := range []int{2, 0, 1} {
		if err := c.PushRows(ctx, mb, 0, 0, rowRecs[mb], "movie", rowIDs[mb], 3, rowGrads[mb]); err != nil {
			t.Fatal(err)
		}
	}
	densePushes(t, shards, rowRecs, 2, 0, 1)
	ids := []uint64{7, 1 << 40, 3, 11, 12345678901, 99}
	got := make([]float32, len(ids)*3)
	if err := c.PullRows(ctx, "movie", ids, 3, 1, 0, got); err != nil {
		t.Fatal(err)
	}
	want := referenceRows(t, ids, 0, 1, 2)
	if !sameBits(got, want) {
		t.Fatalf("rows after the step:\n got  %v\n want %v", got, want)
	}
	if sameBits(want, referenceRows(t, ids, 2, 0, 1)) {
		t.Fatal("the test's values sum alike in any order: it cannot see the order")
	}
	stored := shards[0].tables.byName["movie"].Rows() + shards[1].tables.byName["movie"].Rows()
	if stored != 5 || shards[0].tables.byName["movie"].Rows() == 0 || shards[1].tables.byName["movie"].Rows() == 0 {
		t.Errorf("%d rows stored over the two pservers (%d, %d), want 5 spread over both", stored,
			shards[0].tables.byName["movie"].Rows(), shards[1].tables.byName["movie"].Rows())
	}
}

// referenceRows is ids' values after one table applied the micro-batches'
// rows in the order given.
func referenceRows(t *testing.T, ids []uint64, order ...int) []float32 {
	t.Helper()
	return referenceOf(t, movieTable, rowIDs, rowGrads, ids, order...)
}

// referenceOf is ids' values after one table of cfg applied the
// micro-batches' rows (pushIDs[mb], pushGrads[mb], rowRecs[mb] records) in
// the order given.
func referenceOf(t *testing.T, cfg TableConfig, pushIDs [][]uint64, pushGrads [][]float32, ids []uint64, order ...int) []float32 {
	t.Helper()
	ref, err := NewTable(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var pushes []RowGrads
	var records int64
	for _, mb := range order {
		pushes = append(pushes, RowGrads{IDs: pushIDs[mb], Grad: pushGrads[mb]})
		records += rowRecs[mb]
	}
	if err := ref.Apply(pushes, records); err != nil {
		t.Fatal(err)
	}
	out := make([]float32, len(ids)*cfg.Dim)
	if err := ref.Pull(ids, out); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestRowsRefusedAndDropped: rows of a future step, of an unknown table,
// past the vocabulary or not finite are refused with the status a trainer
// acts on; rows of a step that is aborted are dropped with it.
func TestRowsRefusedAndDropped(t *testing.T) {
	shards, c := rowsCluster(t)
	ctx := context.Background()
	for _, tc := range []struct {
		what  string
		step  int64
		table string
		grad  []float32
		code  codes.Code
	}{
		{"a future step", 1, "movie", []float32{1, 1, 1}, codes.FailedPrecondition},
		{"an unknown table", 0, "user", []float32{1, 1, 1}, codes.InvalidArgument},
		{"a NaN", 0, "movie", []float32{1, float32(math.NaN()), 1}, codes.InvalidArgument},
	} {
		err := c.PushRows(ctx, 0, tc.step, 0, 1, tc.table, []uint64{7}, 3, tc.grad)
		if status.Code(err) != tc.code {
			t.Errorf("rows of %s: %v, want %s", tc.what, err, tc.code)
		}
	}
	if err := c.PushRows(ctx, 0, 0, 0, 3, "movie", rowIDs[0], 3, rowGrads[0]); err != nil {
		t.Fatal(err)
	}
	for _, s := range shards {
		s.AbortStep()
	}
	densePushes(t, shards, rowRecs, 0, 1, 2)
	if n := shards[0].tables.byName["movie"].Rows() + shards[1].tables.byName["movie"].Rows(); n != 0 {
		t.Errorf("%d rows stored after their step was aborted, want none", n)
	}
}

// TestRowsInCheckpoints: a snapshot holds the stored rows (ids whose
// halves are NaN bit patterns included) and adam's counts; a shard
// restored from it answers the same rows, and one restored from a
// checkpoint without rows has none.
func TestRowsInCheckpoints(t *testing.T) {
	cfg := TableConfig{Name: "movie", Dim: 3, Seed: 5, Optimizer: OptimizerConfig{Kind: OptimizerAdam, LearningRate: 0.1}.WithDefaults()}
	newShard := func() *Shard {
		s, err := NewShard(ShardConfig{Mode: jobspec.ModeAsync, Optimizer: cfg.Optimizer, Tables: []TableConfig{cfg}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	a := newShard()
	ids := []uint64{0x7fc00001_7fc00001, 1, 0xffffffff_ffffffff}
	for range 2 {
		if err := a.PushRows(0, 0, 0, 1, "movie", RowGrads{IDs: ids, Grad: []float32{1, 2, 3, 4, 5, 6, 7, 8, 9}}); err != nil {
			t.Fatal(err)
		}
	}
	if !a.SnapshotNow() {
		t.Fatal("no snapshot taken")
	}
	snap := <-a.Snapshots()
	var secs []checkpoint.Section
	for _, sec := range snap.Sections {
		data := sec.Data
		if sec.Source != nil {
			data = make([]float32, sec.Source.Len())
			sec.Source.ReadFloats(data, 0)
		}
		secs = append(secs, checkpoint.Section{Name: sec.Name, Data: data})
	}
	a.Release(snap)
	b := newShard()
	if err := b.Restore(snap.Step, 0, secs); err != nil {
		t.Fatal(err)
	}
	want, got := make([]float32, 9), make([]float32, 9)
	if _, err := a.PullRows("movie", ids, want); err != nil {
		t.Fatal(err)
	}
	if _, err := b.PullRows("movie", ids, got); err != nil || !sameBits(got, want) {
		t.Fatalf("restored rows %v (%v), want %v", got, err, want)
	}
	// The counts came back too: one more update moves both alike.
	for _, s := range []*Shard{a, b} {
		if err := s.PushRows(0, 0, 0, 1, "movie", RowGrads{IDs: ids[:1], Grad: []float32{1, 1, 1}}); err != nil {
			t.Fatal(err)
		}
	}
	_, _ = a.PullRows("movie", ids, want)
	_, _ = b.PullRows("movie", ids, got)
	if !sameBits(got, want) {
		t.Errorf("after one more adam step: restored %v, original %v (the row's count was not restored)", got, want)
	}
	if err := b.Restore(0, 0, nil); err != nil || b.tables.byName["movie"].Rows() != 0 {
		t.Errorf("restore of a checkpoint without rows: %v, %d rows; want none", err, b.tables.byName["movie"].Rows())
	}
}

var (
	userTable = TableConfig{Name: "user", Dim: 2, Seed: 9, Optimizer: movieTable.Optimizer}
	userIDs   = [][]uint64{{4, 9}, {9}, {1 << 50, 4, 9}}
	userGrads = [][]float32{{1, 2, 1e8, 1}, {1, 1e8}, {4, 4, 0.25, 1, -1e8, 3}}
)

// twoTables are the movie and user tables of the tests of two tables'
// rows, and twoTablesIDs and twoTablesUIDs the ids they pull back.
var (
	twoTables                   = []model.RecTable{{Field: "movie", Dim: 3}, {Field: "user", Dim: 2}}
	twoTablesIDs, twoTablesUIDs = []uint64{7, 1 << 40, 3, 11, 12345678901, 99}, []uint64{9, 4, 1 << 50, 5}
)

// checkTwoTables fails t unless b, the rows of twoTablesIDs and
// twoTablesUIDs pulled after step 0, has the bits of reference tables
// given micro-batches 0, 1 and 2's rows in that order.
func checkTwoTables(t *testing.T, older bool, b *model.RecBatch) {
	t.Helper()
	if want := referenceRows(t, twoTablesIDs, 0, 1, 2); !sameBits(b.Fields[0].Rows, want) {
		t.Fatalf("older build %v: movie rows\n got  %v\n want %v", older, b.Fields[0].Rows, want)
	}
	if want := referenceOf(t, userTable, userIDs, userGrads, twoTablesUIDs, 0, 1, 2); !sameBits(b.Fields[1].Rows, want) {
		t.Fatalf("older build %v: user rows\n got  %v\n want %v", older, b.Fields[1].Rows, want)
	}
}

// TestBatchRowsOneCallAPserver: a recommender's rows of two tables pushed
// with PushBatchRows in micro-batch order 2, 0, 1 and pulled with
// PullBatchRows go in one call a pserver for both tables, and give the
// bits of reference tables given the pushes in order, and of each table's
// own PullRows; pservers of an older build, which answer those calls
// Unimplemented, get a call a table and give the same bits.
func TestBatchRowsOneCallAPserver(t *testing.T) {
	tables, ids, uids := twoTables, twoTablesIDs, twoTablesUIDs
	for _, older := range []bool{false, true} {
		shards, c, calls := rowsClusterOf(t, []TableConfig{movieTable, userTable}, older)
		ctx := context.Background()
		for _, mb := range []int{2, 0, 1} {
			b := &model.RecBatch{Fields: []model.RecField{{IDs: rowIDs[mb]}, {IDs: userIDs[mb]}}}
			if err := c.PushBatchRows(ctx, mb, 0, 0, rowRecs[mb], tables, b, [][]float32{rowGrads[mb], userGrads[mb]}); err != nil {
				t.Fatal(err)
			}
		}
		densePushes(t, shards, rowRecs, 2, 0, 1)
		b := &model.RecBatch{Fields: []model.RecField{{IDs: ids}, {IDs: uids}}}
		if err := c.PullBatchRows(ctx, tables, b, 1, 0); err != nil {
			t.Fatal(err)
		}
		var batched, each, refused int64
		for _, s := range calls {
			batched, each, refused = batched+s.tables.Load(), each+s.pulls.Load()+s.pushes.Load(), refused+s.refused.Load()
		}
		wantBatched, wantEach, servers := rowCallsOf([][][]uint64{{rowIDs[2], userIDs[2]}, {rowIDs[0], userIDs[0]}, {rowIDs[1], userIDs[1]}, {ids, uids}}, tables, 2)
		// An older pserver refuses the first call of several tables only:
		// the client remembers it.
		if older && (batched != 0 || refused != servers || each != wantEach) || !older && (batched != wantBatched || each != 0 || refused != 0) {
			t.Fatalf("older build %v: %d calls of several tables, %d of one, %d refused; want %d pserver calls, or %d table calls and %d refused",
				older, batched, each, refused, wantBatched, wantEach, servers)
		}
		checkTwoTables(t, older, b)
		own := make([]float32, len(uids)*2)
		if err := c.PullRows(ctx, "user", uids, 2, 1, 0, own); err != nil || !sameBits(own, b.Fields[1].Rows) {
			t.Fatalf("older build %v: the user table's own pull %v (%v), the batched %v", older, own, err, b.Fields[1].Rows)
		}
		if older {
			upgradedInPlace(t, c, calls, tables, b)
		}
	}
	if sameBits(referenceOf(t, userTable, userIDs, userGrads, uids, 0, 1, 2), referenceOf(t, userTable, userIDs, userGrads, uids, 2, 0, 1)) {
		t.Fatal("the user rows sum alike in any order: the test cannot see the order")
	}
}

// rowCallsOf is how many calls the client makes for calls (each the ids of
// every table) to n pservers: batched, one a pserver that owns any of a
// call's rows; each, one a table a pserver that owns any of its rows; and
// how many pservers are called at all.
func rowCallsOf(calls [][][]uint64, tables []model.RecTable, n int) (batched, each, servers int64) {
	called := map[int]bool{}
	for _, call := range calls {
		any := map[int]bool{}
		for i, ids := range call {
			own := map[int]bool{}
			for _, id := range ids {
				own[client.RowOwner(tables[i].Field, id, n)] = true
				any[client.RowOwner(tables[i].Field, id, n)] = true
				called[client.RowOwner(tables[i].Field, id, n)] = true
			}
			each += int64(len(own))
		}
		batched += int64(len(any))
	}
	return batched, each, int64(len(called))
}

// upgradedInPlace: pservers that answered Unimplemented and are upgraded
// at the same address (the client keeps its connections) get calls of
// several tables again within client.olderFor (1000) calls.
func upgradedInPlace(t *testing.T, c *client.Client, calls []*rowCalls, tables []model.RecTable, b *model.RecBatch) {
	t.Helper()
	for _, s := range calls {
		s.older.Store(false)
	}
	for range 1001 {
		if err := c.PullBatchRows(context.Background(), tables, b, 1, 0); err != nil {
			t.Fatal(err)
		}
	}
	for i, s := range calls {
		if s.tables.Load() == 0 {
			t.Fatalf("pserver %d, upgraded in place, got no call of several tables in 1001 pulls", i)
		}
	}
}
