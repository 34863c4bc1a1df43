package pserver

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"runtime/debug"
	"strings"
	"testing"
	"time"

	"github.com/gtrain/gtrain/coord/schema"
	"github.com/gtrain/gtrain/internal/clock"
	"github.com/gtrain/gtrain/internal/testing/etcdtest"
	"github.com/gtrain/gtrain/jobspec"
	"github.com/gtrain/gtrain/pserver/client"
	"go.etcd.io/etcd/client/v3/concurrency"
)

// TestWatchTablesRaisesTheLimit: rows stored after start move the soft
// memory limit up by their 1.5-fold estimate within a tick, so that a table
// that outgrows the start's limit does not leave the collector running
// without end.
func TestWatchTablesRaisesTheLimit(t *testing.T) {
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(-1))
	s := tableShard(t)
	fake := clock.NewFake(time.Unix(0, 0))
	p := &process{shard: s, clock: fake}
	const base = 64 << 20
	debug.SetMemoryLimit(base)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { p.watchTables(ctx, base, 0); close(done) }()
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
	err := s.tables.byName["movie"].Import(ids, rows, nil)
	s.mu.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	tables, _ := s.TableBytes()
	want := base + tables*3/2
	fake.Advance(tableWatchEvery)
	deadline := time.Now().Add(5 * time.Second)
	for debug.SetMemoryLimit(-1) != want {
		if time.Now().After(deadline) {
			t.Fatalf("soft limit %d a tick after %d bytes of rows, want %d", debug.SetMemoryLimit(-1), tables, want)
		}
		time.Sleep(time.Millisecond)
	}
}

// TestWatchTablesWarnsInStatus: once a shard's tables pass 80 % of the
// memory request, the pserver's registration in etcd (what status reads)
// carries the warning within a tick, and a process that does not own its
// runtime (base 0) leaves the soft limit alone.
func TestWatchTablesWarnsInStatus(t *testing.T) {
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(-1))
	s := tableShard(t)
	cli := etcdtest.Dial(t, etcdtest.Start(t).Endpoint)
	ctx, cancel := context.WithCancel(context.Background())
	session, err := concurrency.NewSession(cli)
	if err != nil {
		t.Fatal(err)
	}
	defer session.Close()
	fake := clock.NewFake(time.Unix(0, 0))
	p := &process{shard: s, clock: fake, cli: cli, session: session, key: "/test/pserver/0", name: "pserver-0",
		log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	if err := p.tryClaim(ctx); err != nil {
		t.Fatal(err)
	}
	s.mu.Lock()
	err = s.tables.byName["movie"].Import([]uint64{1, 2, 3}, make([]float32, 3*movieTable.Dim*2), nil)
	s.mu.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	limit := debug.SetMemoryLimit(-1)
	done := make(chan struct{})
	go func() { p.watchTables(ctx, 0, 16); close(done) }() // 16 bytes: any table is past 80 %
	defer func() { cancel(); <-done }()
	if err := fake.WaitForTimers(ctx, 1); err != nil {
		t.Fatal(err)
	}
	fake.Advance(tableWatchEvery)
	deadline := time.Now().Add(5 * time.Second)
	for {
		resp, err := cli.Get(ctx, p.key)
		if err != nil {
			t.Fatal(err)
		}
		var rec schema.PserverRecord
		if len(resp.Kvs) == 1 && json.Unmarshal(resp.Kvs[0].Value, &rec) == nil && strings.Contains(rec.MemoryWarning, "3 rows") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no memory warning naming the 3 rows in the registration a tick later: %s", resp.Kvs)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if got := debug.SetMemoryLimit(-1); got != limit {
		t.Fatalf("soft limit moved to %d by a process that does not own its runtime (was %d)", got, limit)
	}
}

// tableShard is a sync shard of one 4-float block and the movie table.
func tableShard(t *testing.T) *Shard {
	t.Helper()
	blocks, err := client.Partition([]int{4}, 1, 4)
	if err != nil {
		t.Fatal(err)
	}
	s, err := NewShard(ShardConfig{Mode: jobspec.ModeSync, MicroBatches: 1, Blocks: client.BlocksOf(blocks, 0),
		Optimizer: movieTable.Optimizer, Tables: []TableConfig{movieTable}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return s
}
