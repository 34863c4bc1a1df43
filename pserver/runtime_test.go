package pserver

import (
	"context"
	"runtime/debug"
	"testing"
	"time"

	"github.com/gtrain/gtrain/internal/clock"
	"github.com/gtrain/gtrain/jobspec"
	"github.com/gtrain/gtrain/pserver/client"
)

// TestFollowTablesRaisesTheLimit: rows stored after start move the soft
// memory limit up by their 1.5-fold estimate within a tick, so that a table
// that outgrows the start's limit does not leave the collector running
// without end.
func TestFollowTablesRaisesTheLimit(t *testing.T) {
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(-1))
	blocks, err := client.Partition([]int{4}, 1, 4)
	if err != nil {
		t.Fatal(err)
	}
	s, err := NewShard(ShardConfig{Mode: jobspec.ModeSync, MicroBatches: 1, Blocks: client.BlocksOf(blocks, 0),
		Optimizer: movieTable.Optimizer, Tables: []TableConfig{movieTable}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	fake := clock.NewFake(time.Unix(0, 0))
	p := &process{shard: s, clock: fake}
	const base = 64 << 20
	debug.SetMemoryLimit(base)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { p.followTables(ctx, base); close(done) }()
	defer func() { cancel(); <-done }()
	if err := fake.WaitForTimers(ctx, 1); err != nil {
		t.Fatal(err)
	}
	const n = 100_000
	ids, rows := make([]uint64, n), make([]float32, n*movieTable.Dim*2) // values and adagrad's sums
	for i := range ids {
		ids[i] = uint64(i) * 7919
	}
	s.mu.Lock()
	err = s.tables.byName["movie"].Import(ids, rows, nil)
	s.mu.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	tables, _ := s.TableBytes()
	want := base + tables*3/2
	fake.Advance(tableLimitEvery)
	deadline := time.Now().Add(5 * time.Second)
	for debug.SetMemoryLimit(-1) != want {
		if time.Now().After(deadline) {
			t.Fatalf("soft limit %d a tick after %d bytes of rows, want %d", debug.SetMemoryLimit(-1), tables, want)
		}
		time.Sleep(time.Millisecond)
	}
}
