package pserver

import (
	"context"
	"math"
	"net"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/gtrain/gtrain/api"
	"github.com/gtrain/gtrain/checkpoint"
	"github.com/gtrain/gtrain/internal/jobauth"
	"github.com/gtrain/gtrain/jobspec"
	"github.com/gtrain/gtrain/pserver/client"
	"github.com/gtrain/gtrain/pserver/wire"
)

var movieTable = TableConfig{Name: "movie", Dim: 3, Seed: 5, Optimizer: OptimizerConfig{Kind: OptimizerAdagrad, LearningRate: 0.1}.WithDefaults()}

// rowsCluster serves two sync shards of 3 micro-batches, each with the
// movie table, over real gRPC, and returns them and a client of both.
func rowsCluster(t *testing.T) ([]*Shard, *client.Client) {
	t.Helper()
	blocks, err := client.Partition([]int{4}, 2, 2)
	if err != nil {
		t.Fatal(err)
	}
	var shards []*Shard
	var addrs []string
	for i := range 2 {
		s, err := NewShard(ShardConfig{Mode: jobspec.ModeSync, MicroBatches: 3, Blocks: client.BlocksOf(blocks, i),
			Optimizer: movieTable.Optimizer, Tables: []TableConfig{movieTable}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		lis, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		srv := grpc.NewServer(wire.ServerOptions()...)
		api.RegisterPServerServer(srv, NewServer(i, s, nil, nil))
		go func() { _ = srv.Serve(lis) }()
		t.Cleanup(srv.Stop)
		shards, addrs = append(shards, s), append(addrs, lis.Addr().String())
	}
	c, err := client.NewClient(addrs, blocks, jobauth.Dial{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return shards, c
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
	ref, err := NewTable(movieTable)
	if err != nil {
		t.Fatal(err)
	}
	var pushes []RowGrads
	var records int64
	for _, mb := range order {
		pushes = append(pushes, RowGrads{IDs: rowIDs[mb], Grad: rowGrads[mb]})
		records += rowRecs[mb]
	}
	if err := ref.Apply(pushes, records); err != nil {
		t.Fatal(err)
	}
	out := make([]float32, len(ids)*3)
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
