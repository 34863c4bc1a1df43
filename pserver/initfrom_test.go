package pserver

import (
	"slices"
	"strings"
	"testing"

	"github.com/gtrain/gtrain/internal/confine"
	"github.com/gtrain/gtrain/jobspec"
	"github.com/gtrain/gtrain/model"
	"github.com/gtrain/gtrain/pserver/client"
)

// A frozen parameter (init_from.freeze) keeps its values through steps; the
// others move as ever.
func TestFrozenParamIsNotUpdated(t *testing.T) {
	blocks, err := client.Partition([]int{5, 3}, 1, 4)
	if err != nil {
		t.Fatal(err)
	}
	s, err := NewShard(ShardConfig{Mode: jobspec.ModeSync, MicroBatches: 1, Blocks: blocks, Frozen: map[int]bool{0: true},
		Optimizer: OptimizerConfig{Kind: "sgd", LearningRate: 0.1}.WithDefaults()},
		func(b client.Block, dst []float32) {
			for i := range dst {
				dst[i] = 1
			}
		})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.Push(grad(s, 0, 0, 1, func(int, int) float32 { return 1 })); err != nil {
		t.Fatal(err)
	}
	got := params(s) // param 0 (5 floats) then param 1 (3 floats)
	for i, v := range got {
		frozen := i < 5
		if frozen && v != 1 || !frozen && v == 1 {
			t.Errorf("float %d = %v after a step (frozen: %v)", i, v, frozen)
		}
	}
}

// TestWarmStartKeepsTheRowsItOwns: a warm start of a recommender gives
// each pserver exactly the model's rows it owns (client.RowOwner over the
// job's pservers), values bit for bit and a zero optimizer state, for 1 and
// 3 pservers; rows the model lacks start from the seed; a rollback to step
// 0 puts the warm rows back; a dimension other than the job's is refused.
func TestWarmStartKeepsTheRowsItOwns(t *testing.T) {
	models := t.TempDir()
	movie := model.TableRows{Name: "movie", Dim: 3}
	for i := range 200 {
		movie.IDs = append(movie.IDs, uint64(i)*7919+1)
		movie.Vals = append(movie.Vals, float32(i), -float32(i), 0.5)
	}
	ps := []model.ParamSpec{{Name: "w0", Shape: []int{2}}}
	dir, err := model.WriteParamsState(models, 0, 10, model.Spec{Kind: model.KindProgram}, ps, [][]float32{{1, 2}}, nil, []model.TableRows{movie})
	if err != nil {
		t.Fatal(err)
	}
	man, _, err := model.ReadModel(dir)
	if err != nil {
		t.Fatal(err)
	}
	roots, err := confine.NewRoots(models)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{1, 3} {
		got := map[uint64][]float32{}
		for i := range n {
			spec := &jobspec.Spec{Pservers: n, Seed: 5, InitFrom: jobspec.InitFromSpec{Dir: dir, Resolved: dir},
				Optimizer: jobspec.OptimizerSpec{Kind: "adagrad", LearningRate: 0.1},
				Model:     jobspec.ModelSpec{Kind: model.KindRecommender, Dim: 3, Outputs: 1, Fields: []string{"movie", "user"}}}
			p := &process{cfg: Config{Index: i}, spec: spec, roots: roots}
			if err := p.loadInitRows(man); err != nil {
				t.Fatal(err)
			}
			tables := p.tables()
			s, err := NewShard(ShardConfig{Mode: jobspec.ModeSync, MicroBatches: 1, Optimizer: OptimizerOf(spec), Tables: tables}, nil)
			if err != nil {
				t.Fatal(err)
			}
			ids, rows, _ := s.tables.byName["movie"].Export()
			for k, id := range ids {
				if client.RowOwner("movie", id, n) != i {
					t.Fatalf("%d pservers: pserver %d holds row %d, owned by %d", n, i, id, client.RowOwner("movie", id, n))
				}
				row := rows[k*6 : k*6+6] // 3 values, 3 adagrad sums
				if !slices.Equal(row[3:], make([]float32, 3)) {
					t.Fatalf("row %d starts with optimizer state %v, want zeros", id, row[3:])
				}
				got[id] = slices.Clone(row[:3])
			}
			if s.TableRows("user") != 0 {
				t.Fatalf("the user table, which the model lacks, holds %d rows", s.TableRows("user"))
			}
			s.Reinit(1, nil) // a rollback to step 0
			if again, _, _ := s.tables.byName["movie"].Export(); !slices.Equal(again, ids) {
				t.Fatalf("after a rollback to step 0 pserver %d holds %d rows, want the warm %d", i, len(again), len(ids))
			}
		}
		if len(got) != len(movie.IDs) {
			t.Fatalf("%d pservers hold %d of the model's %d rows", n, len(got), len(movie.IDs))
		}
		for k, id := range movie.IDs {
			if !slices.Equal(got[id], movie.Vals[3*k:3*k+3]) {
				t.Fatalf("%d pservers: row %d starts at %v, the model has %v", n, id, got[id], movie.Vals[3*k:3*k+3])
			}
		}
	}
	wide := jobspec.ModelSpec{Kind: model.KindRecommender, Dim: 4, Outputs: 1, Fields: []string{"movie"}}
	spec := &jobspec.Spec{Pservers: 1, InitFrom: jobspec.InitFromSpec{Dir: dir, Resolved: dir}, Model: wide}
	if err := (&process{spec: spec, roots: roots}).loadInitRows(man); err == nil || !strings.Contains(err.Error(), `embedding table "movie" has rows of dimension 3`) {
		t.Fatalf("a table of dimension 4 warm-started from one of 3: %v", err)
	}
}

// TestTablesOfTakesTheInitialiser: a table's init_scale reaches its
// pserver table, whose rows then start within ±init_scale, wider than the
// default's; a table without one keeps the default.
func TestTablesOfTakesTheInitialiser(t *testing.T) {
	spec := &jobspec.Spec{Pservers: 1, Seed: 5, Optimizer: jobspec.OptimizerSpec{Kind: "adagrad", LearningRate: 0.1},
		Model: jobspec.ModelSpec{Kind: model.KindRecommender, Dim: 4, Outputs: 1, Fields: []string{"movie", "user"},
			Tables: map[string]jobspec.TableSpec{"user": {InitScale: 2}}}}
	widest := map[string]float32{}
	for _, cfg := range TablesOf(spec) {
		tab, err := NewTable(cfg)
		if err != nil {
			t.Fatal(err)
		}
		ids := make([]uint64, 500)
		for i := range ids {
			ids[i] = uint64(i)*7919 + 3
		}
		vals := make([]float32, len(ids)*cfg.Dim)
		if err := tab.Pull(ids, vals); err != nil {
			t.Fatal(err)
		}
		for _, v := range vals {
			widest[cfg.Name] = max(widest[cfg.Name], v, -v)
		}
	}
	if w := widest["user"]; w <= DefaultInitScale || w > 2 {
		t.Errorf("user rows (init_scale 2) reach %v, want within ±2 and past the default %v", w, DefaultInitScale)
	}
	if w := widest["movie"]; w == 0 || w > DefaultInitScale {
		t.Errorf("movie rows (no init_scale) reach %v, want within ±%v", w, DefaultInitScale)
	}
}
