package model

import (
	"errors"
	"math"
	"math/rand/v2"
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
	dir, err := WriteParamsState(modelDir, 1, 7, m.Spec(), m.Params(), params, st)
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
