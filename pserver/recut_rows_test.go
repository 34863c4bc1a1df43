package pserver

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/gtrain/gtrain/pserver/client"
)

// rowShards is one table cut over n pservers as client.RowOwner cuts it.
func rowShards(t *testing.T, cfg TableConfig, n int) []*Table {
	t.Helper()
	out := make([]*Table, n)
	for i := range out {
		tab, err := NewTable(cfg)
		if err != nil {
			t.Fatal(err)
		}
		out[i] = tab
	}
	return out
}

// applyRouted applies one step's pushes to the pservers owning each row.
func applyRouted(t *testing.T, shards []*Table, pushes []RowGrads, records int64) {
	t.Helper()
	dim := shards[0].Dim()
	for i, tab := range shards {
		var mine []RowGrads
		for _, p := range pushes {
			var r RowGrads
			for k, id := range p.IDs {
				if client.RowOwner(tab.cfg.Name, id, len(shards)) == i {
					r.IDs, r.Grad = append(r.IDs, id), append(r.Grad, p.Grad[k*dim:(k+1)*dim]...)
				}
			}
			if len(r.IDs) > 0 {
				mine = append(mine, r)
			}
		}
		if len(mine) > 0 {
			if err := tab.Apply(mine, records); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// randomSteps are steps of 2 pushes each over ids drawn from a small range
// (so rows repeat within and across steps) and a few huge ones.
func randomSteps(rng *rand.Rand, dim, steps int) [][]RowGrads {
	var out [][]RowGrads
	for range steps {
		var step []RowGrads
		for range 2 {
			var p RowGrads
			for range 1 + rng.IntN(12) {
				id := rng.Uint64N(40)
				if rng.IntN(5) == 0 {
					id = rng.Uint64()
				}
				p.IDs = append(p.IDs, id)
				for range dim {
					p.Grad = append(p.Grad, float32(rng.NormFloat64()))
				}
			}
			step = append(step, p)
		}
		out = append(out, step)
	}
	return out
}

// exported is a pserver set's rows (values, optimizer state, counts), sorted by id.
type exportedRow struct {
	id    uint64
	row   []float32
	count uint32
}

func exportAll(shards []*Table) []exportedRow {
	var out []exportedRow
	for _, tab := range shards {
		ids, rows, steps := tab.Export()
		w := tab.width
		for i, id := range ids {
			r := exportedRow{id: id, row: rows[i*w : (i+1)*w]}
			if steps != nil {
				r.count = steps[i]
			}
			out = append(out, r)
		}
	}
	slices.SortFunc(out, func(a, b exportedRow) int {
		switch {
		case a.id < b.id:
			return -1
		case a.id > b.id:
			return 1
		}
		return 0
	})
	return out
}

// TestRecutRowsMatchesTrainingOnTheNewCount: rows trained on n pservers
// and re-cut to m are, bit for bit, those m pservers trained from the
// start would hold (values, adagrad's sums, adam's moments and each row's
// count), each on the pserver RowOwner names; training on continues alike.
func TestRecutRowsMatchesTrainingOnTheNewCount(t *testing.T) {
	for _, kind := range []string{OptimizerAdam, OptimizerAdagrad, OptimizerSGD} {
		cfg := TableConfig{Name: "movie", Dim: 3, Seed: 9, Optimizer: OptimizerConfig{Kind: kind, LearningRate: 0.1}.WithDefaults()}
		for _, tc := range []struct{ from, to int }{{2, 3}, {3, 2}, {1, 4}, {4, 1}, {2, 2}} {
			rng := rand.New(rand.NewPCG(uint64(tc.from), uint64(tc.to)))
			steps := randomSteps(rng, cfg.Dim, 12)
			old, ref := rowShards(t, cfg, tc.from), rowShards(t, cfg, tc.to)
			for _, s := range steps[:8] {
				applyRouted(t, old, s, 7)
				applyRouted(t, ref, s, 7)
			}
			files := make([]map[string][]float32, tc.from)
			for j, tab := range old {
				ids, rows, counts := tab.Export()
				files[j] = sectionsByName(tableSections("movie", ids, rows, counts))
			}
			recut := rowShards(t, cfg, tc.to)
			for i, tab := range recut {
				secs, err := RecutRows([]string{"movie", "absent"}, files, i, tc.to)
				if err != nil {
					t.Fatalf("%s %+v pserver %d: %v", kind, tc, i, err)
				}
				if len(secs) != 3 {
					t.Fatalf("%s %+v: %d sections, want the 3 of table movie (none of a table no file has)", kind, tc, len(secs))
				}
				ts := tableSet{byName: map[string]*Table{"movie": tab}, names: []string{"movie"}}
				if err := ts.restore(sectionsByName(secs)); err != nil {
					t.Fatal(err)
				}
				ids, _, _ := tab.Export()
				for _, id := range ids {
					if client.RowOwner("movie", id, tc.to) != i {
						t.Fatalf("%s %+v: row %d re-cut onto pserver %d, RowOwner says %d", kind, tc, id, i, client.RowOwner("movie", id, tc.to))
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
}

func assertSameRows(t *testing.T, kind string, got, want []exportedRow) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d rows after re-cutting, want %d", kind, len(got), len(want))
	}
	for k := range want {
		g, w := got[k], want[k]
		if g.id != w.id || g.count != w.count || !slices.EqualFunc(g.row, w.row, func(a, b float32) bool { return math.Float32bits(a) == math.Float32bits(b) }) {
			t.Fatalf("%s: row %d after re-cutting: %+v, want %+v", kind, k, g, w)
		}
	}
}

// TestRecutRowsRefusesFilesOfAnotherLayout: a row in the file of a pserver
// that did not own it (the files of another count), or rows whose widths
// differ between files, are ErrRecut, not rows silently doubled.
func TestRecutRowsRefusesFilesOfAnotherLayout(t *testing.T) {
	var ids []uint64
	for id := uint64(0); len(ids) < 2; id++ {
		if client.RowOwner("movie", id, 2) == 1 {
			ids = append(ids, id)
		}
	}
	file := func(ids []uint64, width int) map[string][]float32 {
		return sectionsByName(tableSections("movie", ids, make([]float32, len(ids)*width), nil))
	}
	if _, err := RecutRows([]string{"movie"}, []map[string][]float32{file(ids, 2), file(nil, 2)}, 0, 3); !errors.Is(err, ErrRecut) {
		t.Errorf("rows of pserver-1 in pserver-0's file: err %v, want ErrRecut", err)
	}
	if _, err := RecutRows([]string{"movie"}, []map[string][]float32{nil, file(ids, 2)}, 0, 3); err != nil {
		t.Errorf("rows in their owner's file: %v", err)
	}
	var own0 []uint64
	for id := uint64(0); len(own0) < 1; id++ {
		if client.RowOwner("movie", id, 2) == 0 {
			own0 = append(own0, id)
		}
	}
	if _, err := RecutRows([]string{"movie"}, []map[string][]float32{file(own0, 3), file(ids, 2)}, 0, 3); !errors.Is(err, ErrRecut) {
		t.Errorf("rows of 3 floats in one file, 2 in another: err %v, want ErrRecut", err)
	}
}
