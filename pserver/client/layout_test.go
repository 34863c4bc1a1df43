package client

import (
	"errors"
	"slices"
	"testing"

	"github.com/gtrain/gtrain/jobspec"
)

func TestNewLayout(t *testing.T) {
	spec := &jobspec.Spec{Name: "mlp", Pservers: 3, Model: jobspec.ModelSpec{Kind: "mlp", Inputs: 5, Outputs: 2, Hidden: []int{4}}}
	l, err := NewLayout(spec)
	if err != nil {
		t.Fatal(err)
	}
	var sizes []int
	for _, p := range l.Model.Params() {
		sizes = append(sizes, p.Size())
	}
	if !slices.Equal(l.Sizes, sizes) {
		t.Fatalf("Sizes = %v, the model's parameters have %v", l.Sizes, sizes)
	}
	want, err := Partition(sizes, 3, MaxBlockFloats)
	if err != nil || !slices.Equal(l.Blocks, want) {
		t.Fatalf("Blocks = %v, want Partition's %v (%v)", l.Blocks, want, err)
	}
	for i, p := range l.NewParams() {
		if len(p) != sizes[i] {
			t.Fatalf("NewParams()[%d] has %d floats, want %d", i, len(p), sizes[i])
		}
	}
	if _, err := NewLayout(&jobspec.Spec{Name: "none", Pservers: 0, Model: spec.Model}); !errors.Is(err, ErrPartitionArgument) {
		t.Fatalf("no pservers: err = %v, want ErrPartitionArgument", err)
	}
}
