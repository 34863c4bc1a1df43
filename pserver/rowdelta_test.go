package pserver

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/gtrain/gtrain/checkpoint"
	"github.com/gtrain/gtrain/pserver/client"
)

// rowStore is a real checkpoint store of pserver index in dir, keeping
// only the 2 newest checkpoints (and, so, whatever bases they need).
func rowStore(t *testing.T, dir string, index int) *checkpoint.Store {
	t.Helper()
	s, err := checkpoint.NewStore(checkpoint.Config{Identity: checkpoint.Identity{Job: "rows", Rev: 1}, Dir: dir, Keep: 2, Index: index},
		checkpoint.NewMemRecorder(), nil)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// saveRows checkpoints ts's rows at step as the pserver's snapshot would
// (rowSections) and returns the bytes its table sections hold.
func saveRows(t *testing.T, store *checkpoint.Store, ts *tableSet, index int, step int64) (bytes int, base int64) {
	t.Helper()
	secs, base := ts.rowSections(step)
	if _, err := store.Save(context.Background(), checkpoint.Snapshot{Index: index, Step: step, Base: base, Sections: secs}); err != nil {
		t.Fatal(err)
	}
	for _, sec := range secs {
		bytes += 4 * len(sec.Data)
	}
	return bytes, base
}

// loadRows loads step's checkpoint with its chain of bases into a fresh
// table set of cfg and returns its tables' rows.
func loadRows(t *testing.T, store *checkpoint.Store, cfg TableConfig, step int64) *Table {
	t.Helper()
	snap, err := store.LoadStep(context.Background(), step)
	if err != nil {
		t.Fatal(err)
	}
	if err := loadRowChain(store, snap, []string{cfg.Name}); err != nil {
		t.Fatalf("step %d: %v", step, err)
	}
	ts, err := newTableSet([]TableConfig{cfg})
	if err != nil {
		t.Fatal(err)
	}
	if err := ts.restore(sectionsByName(snap.Sections)); err != nil {
		t.Fatal(err)
	}
	return ts.byName[cfg.Name]
}

// assertSameTable compares two tables' rows in row order, bit for bit.
func assertSameTable(t *testing.T, what string, got, want *Table) {
	t.Helper()
	gi, gr, gs := got.Export()
	wi, wr, ws := want.Export()
	if len(gi) != len(wi) || !sameBits(gr, wr) || len(gs) != len(ws) {
		t.Fatalf("%s: %d rows (%d floats, %d counts), want %d (%d, %d) or values differ", what, len(gi), len(gr), len(gs), len(wi), len(wr), len(ws))
	}
	for i := range wi {
		if gi[i] != wi[i] || (ws != nil && gs[i] != ws[i]) {
			t.Fatalf("%s: row %d is id %d, want %d (or its count differs)", what, i, gi[i], wi[i])
		}
	}
}

// fewRows is one step touching n rows out of ids [0, span), some new.
func fewRows(rng *rand.Rand, dim, n int, span uint64) []RowGrads {
	var p RowGrads
	for range n {
		p.IDs = append(p.IDs, rng.Uint64N(span))
		for range dim {
			p.Grad = append(p.Grad, float32(rng.NormFloat64()))
		}
	}
	return []RowGrads{p}
}

// TestRowCheckpointsAreIncremental: after a step touching few of 5000
// rows, the checkpoint's table sections are a small delta; restoring any
// kept step (the newest, or an older one as a rollback does) from its base
// and deltas gives, bit for bit, the rows the table had then, for every
// optimizer; a restore makes the next checkpoint a full base; the chain
// is cut every maxRowChain checkpoints, and only 2 are kept on disk
// (prune must spare the bases).
func TestRowCheckpointsAreIncremental(t *testing.T) {
	for _, kind := range []string{OptimizerSGD, OptimizerAdagrad, OptimizerAdam} {
		cfg := TableConfig{Name: "movie", Dim: 4, Seed: 3, Optimizer: OptimizerConfig{Kind: kind, LearningRate: 0.1}.WithDefaults()}
		ts, err := newTableSet([]TableConfig{cfg})
		if err != nil {
			t.Fatal(err)
		}
		tab := ts.byName["movie"]
		store := rowStore(t, t.TempDir(), 0)
		rng := rand.New(rand.NewPCG(1, 2))
		all := RowGrads{}
		for id := range uint64(5000) {
			all.IDs, all.Grad = append(all.IDs, id), append(all.Grad, 1, 2, 3, 4)
		}
		if err := tab.Apply([]RowGrads{all}, 1); err != nil {
			t.Fatal(err)
		}
		full, base := saveRows(t, store, &ts, 0, 10)
		if base != 0 {
			t.Fatalf("%s: the first checkpoint is a delta on %d, want a full base", kind, base)
		}
		var prev *Table
		for step := int64(11); step <= 30; step++ {
			if err := tab.Apply(fewRows(rng, cfg.Dim, 5, 5100), 3); err != nil {
				t.Fatal(err)
			}
			bytes, base := saveRows(t, store, &ts, 0, step)
			if wantFull := (step-10)%(maxRowChain+1) == 0; wantFull != (base == 0) {
				t.Fatalf("%s step %d: base %d; a full base every %d checkpoints", kind, step, base, maxRowChain+1)
			}
			if base != 0 && bytes*100 > full {
				t.Fatalf("%s step %d: a delta of 5 rows holds %d bytes, the full table %d", kind, step, bytes, full)
			}
			assertSameTable(t, kind+" newest", loadRows(t, store, cfg, step), tab)
			if prev != nil {
				assertSameTable(t, kind+" rollback to the previous step", loadRows(t, store, cfg, step-1), prev)
			}
			prev = loadRows(t, store, cfg, step)
		}
		// A rollback restores the tables: the next checkpoint is full.
		if err := ts.restore(sectionsByName(mustLoadChain(t, store, cfg, 29).Sections)); err != nil {
			t.Fatal(err)
		}
		if _, base := saveRows(t, store, &ts, 0, 30); base != 0 {
			t.Errorf("%s: the checkpoint after a restore is a delta on %d, want a full base", kind, base)
		}
	}
}

func mustLoadChain(t *testing.T, store *checkpoint.Store, cfg TableConfig, step int64) *checkpoint.Snapshot {
	t.Helper()
	snap, err := store.LoadStep(context.Background(), step)
	if err != nil {
		t.Fatal(err)
	}
	if err := loadRowChain(store, snap, []string{cfg.Name}); err != nil {
		t.Fatal(err)
	}
	return snap
}

// TestRecutRowsFromIncrementalCheckpoints: the old pservers' checkpoints
// are base plus deltas; re-cut from them (as restoreRecut loads them), the
// rows are those the new count trained from the start holds.
func TestRecutRowsFromIncrementalCheckpoints(t *testing.T) {
	for _, kind := range []string{OptimizerAdam, OptimizerAdagrad, OptimizerSGD} {
		cfg := TableConfig{Name: "movie", Dim: 3, Seed: 9, Optimizer: OptimizerConfig{Kind: kind, LearningRate: 0.1}.WithDefaults()}
		from, to := 2, 3
		rng := rand.New(rand.NewPCG(7, 8))
		steps := randomSteps(rng, cfg.Dim, 12)
		old, ref := rowShards(t, cfg, from), rowShards(t, cfg, to)
		dir := t.TempDir()
		stores, sets := make([]*checkpoint.Store, from), make([]tableSet, from)
		for j := range old {
			stores[j] = rowStore(t, dir, j)
			sets[j] = tableSet{byName: map[string]*Table{"movie": old[j]}, names: []string{"movie"}}
		}
		deltas := 0
		for i, s := range steps[:8] {
			applyRouted(t, old, s, 7)
			applyRouted(t, ref, s, 7)
			for j := range old {
				if _, base := saveRows(t, stores[j], &sets[j], j, int64(i+1)); base != 0 {
					deltas++
				}
			}
		}
		if deltas == 0 {
			t.Fatalf("%s: no checkpoint was a delta", kind)
		}
		files := make([]map[string][]float32, from)
		for j := range old {
			files[j] = sectionsByName(mustLoadChain(t, stores[j], cfg, 8).Sections)
		}
		recut := rowShards(t, cfg, to)
		for i, tab := range recut {
			secs, err := RecutRows([]string{"movie"}, files, i, to)
			if err != nil {
				t.Fatal(err)
			}
			ts := tableSet{byName: map[string]*Table{"movie": tab}, names: []string{"movie"}}
			if err := ts.restore(sectionsByName(secs)); err != nil {
				t.Fatal(err)
			}
			ids, _, _ := tab.Export()
			for _, id := range ids {
				if client.RowOwner("movie", id, to) != i {
					t.Fatalf("%s: row %d re-cut onto pserver %d", kind, id, i)
				}
			}
		}
		for _, s := range steps[8:] {
			applyRouted(t, recut, s, 5)
			applyRouted(t, ref, s, 5)
		}
		assertSameRows(t, kind, exportAll(recut), exportAll(ref))
	}
}

// TestShardSnapshotsRowDeltas: the shard's snapshots carry the delta's
// base (the previous snapshot's step), and a failed save (ForgetRowBase)
// or a restore makes the next one full.
func TestShardSnapshotsRowDeltas(t *testing.T) {
	blocks, err := client.Partition([]int{4}, 1, 4)
	if err != nil {
		t.Fatal(err)
	}
	s, err := NewShard(ShardConfig{Mode: "async", Blocks: blocks, Optimizer: movieTable.Optimizer, Tables: []TableConfig{movieTable}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	all := RowGrads{}
	for id := range uint64(100) {
		all.IDs, all.Grad = append(all.IDs, id), append(all.Grad, 1, 2, 3)
	}
	snapshot := func(rows RowGrads) (base int64, rowFloats int) {
		t.Helper()
		if err := s.PushRows(0, 0, 0, 1, "movie", rows); err != nil {
			t.Fatal(err)
		}
		if _, _, err := s.Push(grad(s, 0, s.Step(), 1, func(int, int) float32 { return 1 })); err != nil {
			t.Fatal(err)
		}
		if !s.SnapshotNow() {
			t.Fatal("no snapshot taken")
		}
		snap := <-s.Snapshots()
		for _, sec := range snap.Sections {
			if sec.Name == tableRowsSection("movie") {
				rowFloats = len(sec.Data)
			}
		}
		s.Release(snap)
		return snap.Base, rowFloats
	}
	one := RowGrads{IDs: []uint64{3}, Grad: []float32{1, 1, 1}}
	if base, _ := snapshot(all); base != 0 {
		t.Fatalf("first snapshot: base %d, want a full one", base)
	}
	step := s.Step()
	if base, n := snapshot(one); base != step || n != movieTable.Dim*2 {
		t.Fatalf("after a step of one row: base %d, %d row floats; want base %d and that row's %d", base, n, step, movieTable.Dim*2)
	}
	s.ForgetRowBase()
	if base, n := snapshot(one); base != 0 || n != 100*movieTable.Dim*2 {
		t.Fatalf("after a failed save: base %d, %d row floats; want a full snapshot", base, n)
	}
}
