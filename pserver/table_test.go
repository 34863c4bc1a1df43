package pserver

import (
	"errors"
	"math"
	"slices"
	"testing"
)

func testTable(t *testing.T, kind string, vocab uint64) *Table {
	t.Helper()
	tab, err := NewTable(TableConfig{Name: "movie", Dim: 4, Vocab: vocab, Seed: 7,
		Optimizer: OptimizerConfig{Kind: kind, LearningRate: 0.1}.WithDefaults()})
	if err != nil {
		t.Fatal(err)
	}
	return tab
}

func pullRows(t *testing.T, tab *Table, ids ...uint64) []float32 {
	t.Helper()
	out := make([]float32, len(ids)*tab.cfg.Dim)
	if err := tab.Pull(ids, out); err != nil {
		t.Fatal(err)
	}
	return out
}

func sameBits(a, b []float32) bool {
	return slices.EqualFunc(a, b, func(x, y float32) bool { return math.Float32bits(x) == math.Float32bits(y) })
}

// TestTableRowsStartFromSeedTableAndID: a row read before any update is
// computed, not stored; it is the same for the same (seed, table, id) in
// any table, differs with each, and lies within ±InitScale.
func TestTableRowsStartFromSeedTableAndID(t *testing.T) {
	a, b := testTable(t, "sgd", 0), testTable(t, "sgd", 0)
	ids := []uint64{0, 1, 1 << 63, math.MaxUint64}
	ra, rb := pullRows(t, a, ids...), pullRows(t, b, ids...)
	if !sameBits(ra, rb) {
		t.Fatal("two tables of one seed start a row differently")
	}
	if a.Rows() != 0 || a.Bytes() != 0 {
		t.Errorf("pulls stored %d rows, %d bytes; want none", a.Rows(), a.Bytes())
	}
	if sameBits(ra[:4], ra[4:8]) {
		t.Error("ids 0 and 1 start alike")
	}
	for _, v := range ra {
		if v == 0 || v < -DefaultInitScale || v > DefaultInitScale {
			t.Errorf("initial value %v outside ±%v (or zero)", v, DefaultInitScale)
		}
	}
	other, err := NewTable(TableConfig{Name: "user", Dim: 4, Seed: 7, Optimizer: OptimizerConfig{Kind: "sgd", LearningRate: 0.1}})
	if err != nil {
		t.Fatal(err)
	}
	if sameBits(pullRows(t, other, 1), ra[4:8]) {
		t.Error("tables movie and user start id 1 alike")
	}
	want, err := initRowValues(a.cfg, 1<<63)
	if err != nil || !sameBits(want, ra[8:12]) {
		t.Errorf("initRowValues %v, %v; Pull %v", want, err, ra[8:12])
	}
}

// TestTableApplySumsInOrderAndUpdatesLazily: rows named by the pushes
// (an id twice in one push adds up) move by the record-weighted mean
// gradient; other rows are neither stored nor changed.
func TestTableApplySumsInOrderAndUpdatesLazily(t *testing.T) {
	tab := testTable(t, "sgd", 0)
	before := pullRows(t, tab, 5, 9)
	pushes := []RowGrads{
		{IDs: []uint64{5, 5}, Grad: []float32{1, 2, 3, 4, 1, 1, 1, 1}},
		{IDs: []uint64{5}, Grad: []float32{2, 2, 2, 2}},
	}
	if err := tab.Apply(pushes, 4); err != nil {
		t.Fatal(err)
	}
	after := pullRows(t, tab, 5, 9)
	for i, g := range []float32{4, 5, 6, 7} {
		want := before[i] - 0.1*(g*0.25)
		if math.Abs(float64(after[i]-want)) > 1e-7 {
			t.Errorf("row 5 value %d: %v, want %v", i, after[i], want)
		}
	}
	if !sameBits(after[4:], before[4:]) || tab.Rows() != 1 {
		t.Errorf("row 9 moved or was stored: %v -> %v, %d rows", before[4:], after[4:], tab.Rows())
	}
}

// TestLazyAdamCountsEachRowsUpdates: a row updated on every step follows
// the dense adam bit for bit; a row first updated late starts its bias
// correction at its own first update.
func TestLazyAdamCountsEachRowsUpdates(t *testing.T) {
	tab := testTable(t, "adam", 0)
	opt, err := NewOptimizer(tab.cfg.Optimizer)
	if err != nil {
		t.Fatal(err)
	}
	dense := pullRows(t, tab, 3)
	m, v := make([]float32, 4), make([]float32, 4)
	for step := range 5 {
		g := []float32{float32(step) + 0.5, -1, 0.25, 2}
		ids := []uint64{3}
		if step == 4 {
			ids = append(ids, 8)
			g = append(g, g...)
		}
		if err := tab.Apply([]RowGrads{{IDs: ids, Grad: g}}, 1); err != nil {
			t.Fatal(err)
		}
		opt.Update(dense, g[:4], [][]float32{m, v}, int64(step+1))
	}
	if got := pullRows(t, tab, 3); !sameBits(got, dense) {
		t.Errorf("row 3 after 5 lazy adam steps %v, dense adam %v", got, dense)
	}
	late := pullRows(t, testTable(t, "adam", 0), 8)
	opt.Update(late, []float32{4.5, -1, 0.25, 2}, [][]float32{make([]float32, 4), make([]float32, 4)}, 1)
	if got := pullRows(t, tab, 8); !sameBits(got, late) {
		t.Errorf("row 8 first updated at step 5: %v, want adam's first step %v", got, late)
	}
}

func TestTableRefusesBadRows(t *testing.T) {
	tab := testTable(t, "adagrad", 100)
	if err := tab.Pull([]uint64{100}, make([]float32, 4)); !errors.Is(err, ErrBadRows) {
		t.Errorf("pull of id 100 of a 100-row vocab: %v, want ErrBadRows", err)
	}
	if err := tab.Apply([]RowGrads{{IDs: []uint64{1}, Grad: make([]float32, 3)}}, 1); !errors.Is(err, ErrBadRows) {
		t.Errorf("3 gradient floats for a row of 4: %v, want ErrBadRows", err)
	}
	if err := tab.Apply([]RowGrads{{IDs: []uint64{1, 100}, Grad: make([]float32, 8)}}, 1); !errors.Is(err, ErrBadRows) || tab.Rows() != 0 {
		t.Errorf("push naming id 100: %v, %d rows stored; want ErrBadRows and nothing applied", err, tab.Rows())
	}
	if _, err := NewTable(TableConfig{Name: "x", Dim: 4, Optimizer: OptimizerConfig{Kind: "momentum", LearningRate: 0.1}}); err == nil {
		t.Error("a momentum table was declared; lazy momentum is not the dense rule")
	}
	if _, err := NewTable(TableConfig{Name: "x", Dim: 0, Optimizer: OptimizerConfig{Kind: "sgd", LearningRate: 0.1}}); err == nil {
		t.Error("a table of dimension 0 was declared")
	}
}

// TestTableGrowsInChunks: stored rows keep their values as the table
// grows past chunks, and the table's bytes stay within 1.5x rows x
// (values + state + id) once a chunk is mostly full.
func TestTableGrowsInChunks(t *testing.T) {
	tab := testTable(t, "adagrad", 0)
	n := 8*tableChunkRows + tableChunkRows/2
	ids := make([]uint64, n)
	for i := range ids {
		ids[i] = uint64(i) * 7919
	}
	if err := tab.Apply([]RowGrads{{IDs: ids, Grad: make([]float32, n*4)}}, 1); err != nil {
		t.Fatal(err)
	}
	first := pullRows(t, tab, ids[0])
	want, _ := initRowValues(tab.cfg, ids[0])
	if tab.Rows() != n || !sameBits(first, want) {
		t.Fatalf("%d rows, first %v; want %d, %v (a zero gradient leaves adagrad's row as it started)", tab.Rows(), first, n, want)
	}
	perRow := int64(4*4*2 + 8)
	if b := tab.Bytes(); b > int64(float64(n)*1.5*float64(perRow)) {
		t.Errorf("%d rows take %d bytes, over 1.5 x %d per row", n, b, perRow)
	}
}

// initRowValues is the initial values of row id of the table cfg declares
// (what Pull answers before any update).
func initRowValues(cfg TableConfig, id uint64) ([]float32, error) {
	t, err := NewTable(cfg)
	if err != nil {
		return nil, err
	}
	out := make([]float32, cfg.Dim)
	t.initRow(id, out)
	return out, nil
}
