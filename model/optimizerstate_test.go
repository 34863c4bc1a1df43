package model

import (
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestOptimizerStateRoundTrip: a pass directory keeps the optimizer's slots
// beside the parameters, read back bit for bit; a flipped byte in a slot
// file is ErrCorruptModel, and a model without state says so.
func TestOptimizerStateRoundTrip(t *testing.T) {
	m := mustNew(t, Spec{Kind: KindMLP, Inputs: 5, Outputs: 3, Hidden: []int{4}})
	r := rand.New(rand.NewPCG(3, 4))
	params := randomParams(m, r)
	st := &OptimizerState{Kind: "adam", Slots: [][][]float32{randomParams(m, r), randomParams(m, r)}}
	modelDir := filepath.Join(t.TempDir(), "model")
	dir, err := WriteParamsState(modelDir, 1, 7, m.Spec(), m.Params(), params, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	man, _, err := ReadModel(dir)
	if err != nil {
		t.Fatal(err)
	}
	got, err := ReadOptimizerState(dir, man)
	if err != nil {
		t.Fatal(err)
	}
	if got.Kind != "adam" || len(got.Slots) != 2 {
		t.Fatalf("read %s with %d slots, want adam with 2", got.Kind, len(got.Slots))
	}
	bits := func(a, b float32) bool { return math.Float32bits(a) == math.Float32bits(b) }
	for k := range st.Slots {
		for j := range params {
			if !slices.EqualFunc(got.Slots[k][j], st.Slots[k][j], bits) {
				t.Fatalf("slot %d of param %d read back differently", k, j)
			}
		}
	}
	if f := man.Optimizer.Slots[1][0].File; f != m.Params()[0].Name+".slot1.f32" {
		t.Errorf("slot file %q, want NAME.slot1.f32", f)
	}
	if err := flipByte(filepath.Join(dir, man.Optimizer.Slots[1][0].File), 3); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadOptimizerState(dir, man); !errors.Is(err, ErrCorruptModel) {
		t.Errorf("flipped slot byte: %v, want ErrCorruptModel", err)
	}
	plain, err := WriteModel(modelDir, 2, 9, m, params)
	if err != nil {
		t.Fatal(err)
	}
	man, _, err = ReadModel(plain)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ReadOptimizerState(plain, man); !errors.Is(err, ErrNoOptimizerState) {
		t.Errorf("model without state: %v, want ErrNoOptimizerState", err)
	}
}

// TestTablesInTheModel: a recommender's rows are written beside its dense
// parameters, ids and values each with its sha256.
func TestTablesInTheModel(t *testing.T) {
	m := mustNew(t, Spec{Kind: KindMLP, Inputs: 5, Outputs: 3, Hidden: []int{4}})
	params := randomParams(m, rand.New(rand.NewPCG(5, 6)))
	rows := []TableRows{{Name: "user", Dim: 2, IDs: []uint64{3, 1 << 60}, Vals: []float32{1, 2, 3, 4}}}
	dir, err := WriteParamsState(t.TempDir(), 0, 3, m.Spec(), m.Params(), params, nil, rows)
	if err != nil {
		t.Fatal(err)
	}
	man, _, err := ReadModel(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(man.Tables) != 1 || man.Tables[0].Rows != 2 || man.Tables[0].File != "table.user.f32" || len(man.Tables[0].SHA256) != 64 {
		t.Fatalf("tables in the manifest: %+v", man.Tables)
	}
	ids, err := os.ReadFile(filepath.Join(dir, man.Tables[0].IDsFile))
	if err != nil || len(ids) != 16 || ids[15] != 0x10 {
		t.Errorf("ids file %x, %v: want 3 then 1<<60, little-endian", ids, err)
	}
	if _, err := WriteParamsState(t.TempDir(), 0, 3, m.Spec(), m.Params(), params, nil,
		[]TableRows{{Name: "user", Dim: 2, IDs: []uint64{3}, Vals: []float32{1}}}); !errors.Is(err, ErrParamMismatch) {
		t.Errorf("a row of 1 value for dim 2: %v, want ErrParamMismatch", err)
	}
}
