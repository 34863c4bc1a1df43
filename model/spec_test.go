package model

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

func TestSpecValidate(t *testing.T) {
	tests := []struct {
		name    string
		spec    Spec
		wantMsg string // empty: valid
	}{
		{"linear", Spec{Kind: KindLinear, Inputs: 13, Outputs: 1}, ""},
		{"softmax", Spec{Kind: KindSoftmax, Inputs: 784, Outputs: 10}, ""},
		{"mlp classifier", Spec{Kind: KindMLP, Inputs: 4, Outputs: 3, Hidden: []int{8, 5}}, ""},
		{"mlp regression", Spec{Kind: KindMLP, Inputs: 4, Outputs: 1, Hidden: []int{8}}, ""},
		{"mlp no hidden", Spec{Kind: KindMLP, Inputs: 4, Outputs: 3}, ""},
		{"unknown kind", Spec{Kind: "mf", Inputs: 1, Outputs: 1}, `model.kind: must be one of linear, softmax, mlp, got "mf"`},
		{"empty kind", Spec{Inputs: 1, Outputs: 1}, `model.kind: must be one of linear, softmax, mlp, got ""`},
		{"zero inputs", Spec{Kind: KindLinear, Inputs: 0, Outputs: 1}, "model.inputs: must be > 0, got 0"},
		{"negative inputs", Spec{Kind: KindSoftmax, Inputs: -3, Outputs: 2}, "model.inputs: must be > 0, got -3"},
		{"zero outputs", Spec{Kind: KindMLP, Inputs: 2, Outputs: 0}, "model.outputs: must be > 0, got 0"},
		{"linear two outputs", Spec{Kind: KindLinear, Inputs: 2, Outputs: 2}, "model.outputs: linear supports exactly 1 output for now, got 2"},
		{"softmax one class", Spec{Kind: KindSoftmax, Inputs: 2, Outputs: 1}, "model.outputs: softmax needs at least 2 classes, got 1"},
		{"linear with hidden", Spec{Kind: KindLinear, Inputs: 2, Outputs: 1, Hidden: []int{3}}, "model.hidden: only mlp takes hidden layers"},
		{"bad hidden width", Spec{Kind: KindMLP, Inputs: 2, Outputs: 2, Hidden: []int{3, 0}}, "model.hidden[1]: must be > 0, got 0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.spec.Validate()
			_, newErr := New(tt.spec)
			if tt.wantMsg == "" {
				if err != nil || newErr != nil {
					t.Fatalf("Validate() = %v, New() error = %v; want both nil", err, newErr)
				}
				return
			}
			if !errors.Is(err, ErrInvalidSpec) || !errors.Is(newErr, ErrInvalidSpec) {
				t.Fatalf("Validate() = %v, New() error = %v; want ErrInvalidSpec", err, newErr)
			}
			if !strings.HasPrefix(err.Error(), tt.wantMsg) {
				t.Errorf("Validate() = %q; want prefix %q", err, tt.wantMsg)
			}
		})
	}
}

func TestParams(t *testing.T) {
	tests := []struct {
		spec Spec
		want []ParamSpec
	}{
		{Spec{Kind: KindLinear, Inputs: 13, Outputs: 1}, []ParamSpec{
			{"w", []int{13, 1}}, {"b", []int{1}}}},
		{Spec{Kind: KindSoftmax, Inputs: 4, Outputs: 3}, []ParamSpec{
			{"w", []int{4, 3}}, {"b", []int{3}}}},
		{Spec{Kind: KindMLP, Inputs: 4, Outputs: 3, Hidden: []int{8, 5}}, []ParamSpec{
			{"w0", []int{4, 8}}, {"b0", []int{8}}, {"w1", []int{8, 5}}, {"b1", []int{5}}, {"w2", []int{5, 3}}, {"b2", []int{3}}}},
	}
	for _, tt := range tests {
		m := mustNew(t, tt.spec)
		got := m.Params()
		if !slices.EqualFunc(got, tt.want, func(a, b ParamSpec) bool {
			return a.Name == b.Name && slices.Equal(a.Shape, b.Shape)
		}) {
			t.Errorf("%s Params() = %v; want %v", tt.spec.Kind, got, tt.want)
		}
		got[0].Shape[0] = 999 // callers must not be able to corrupt the model
		if m.Params()[0].Shape[0] == 999 {
			t.Errorf("%s Params() returned the model's own shape slice", tt.spec.Kind)
		}
	}
}

func TestSizes(t *testing.T) {
	if got := (ParamSpec{Shape: []int{4, 8}}).Size(); got != 32 {
		t.Errorf("Size([4 8]) = %d; want 32", got)
	}
	if got := (ParamSpec{Shape: []int{7}}).Size(); got != 7 {
		t.Errorf("Size([7]) = %d; want 7", got)
	}
	m := mustNew(t, Spec{Kind: KindMLP, Inputs: 4, Outputs: 3, Hidden: []int{8, 5}})
	if got, want := TotalSize(m.Params()), 4*8+8+8*5+5+5*3+3; got != want {
		t.Errorf("TotalSize = %d; want %d", got, want)
	}
	if got := TotalSize(nil); got != 0 {
		t.Errorf("TotalSize(nil) = %d; want 0", got)
	}
}

func TestSpecIsCopied(t *testing.T) {
	hidden := []int{4}
	m := mustNew(t, Spec{Kind: KindMLP, Inputs: 2, Outputs: 2, Hidden: hidden})
	hidden[0] = 100
	if got := m.Spec().Hidden[0]; got != 4 {
		t.Errorf("model follows the caller's Hidden slice: got %d; want 4", got)
	}
	m.Spec().Hidden[0] = 100
	if got := m.Spec().Hidden[0]; got != 4 {
		t.Errorf("Spec() exposes the model's Hidden slice: got %d; want 4", got)
	}
}

func TestCheckBatch(t *testing.T) {
	softmax := Spec{Kind: KindSoftmax, Inputs: 2, Outputs: 3}
	linear := Spec{Kind: KindLinear, Inputs: 2, Outputs: 1}
	tests := []struct {
		name    string
		spec    Spec
		batch   Batch
		wantMsg string
	}{
		{"ok", softmax, Batch{N: 2, Inputs: 2, X: make([]float32, 4), Y: []float32{0, 2}}, ""},
		{"empty", softmax, Batch{Inputs: 2}, ""},
		{"regression label any value", linear, Batch{N: 1, Inputs: 2, X: make([]float32, 2), Y: []float32{-3.7}}, ""},
		{"inputs", softmax, Batch{N: 1, Inputs: 3, X: make([]float32, 3), Y: []float32{0}}, "batch: inputs = 3, model.inputs = 2"},
		{"short X", softmax, Batch{N: 2, Inputs: 2, X: make([]float32, 3), Y: []float32{0, 1}}, "batch: len(X) = 3, want N*Inputs = 4"},
		{"short Y", softmax, Batch{N: 2, Inputs: 2, X: make([]float32, 4), Y: []float32{0}}, "batch: len(Y) = 1, want N = 2"},
		{"class too big", softmax, Batch{N: 2, Inputs: 2, X: make([]float32, 4), Y: []float32{0, 3}}, "batch: record 1: label 3 is not a class index in [0, 3)"},
		{"fractional class", softmax, Batch{N: 1, Inputs: 2, X: make([]float32, 2), Y: []float32{1.5}}, "batch: record 0: label 1.5"},
		{"negative class", softmax, Batch{N: 1, Inputs: 2, X: make([]float32, 2), Y: []float32{-1}}, "batch: record 0: label -1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.spec.CheckBatch(tt.batch)
			if tt.wantMsg == "" {
				if err != nil {
					t.Fatalf("CheckBatch() = %v; want nil", err)
				}
				return
			}
			if !errors.Is(err, ErrInvalidBatch) || !strings.HasPrefix(err.Error(), tt.wantMsg) {
				t.Fatalf("CheckBatch() = %v; want ErrInvalidBatch with prefix %q", err, tt.wantMsg)
			}
		})
	}
}

func mustNew(t testing.TB, s Spec) Model {
	t.Helper()
	m, err := New(s)
	if err != nil {
		t.Fatalf("New(%+v): %v", s, err)
	}
	return m
}
