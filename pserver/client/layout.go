package client

import (
	"fmt"

	"github.com/gtrain/gtrain/jobspec"
	"github.com/gtrain/gtrain/model"
)

// MaxBlockFloats caps a block (4 MiB) so a large parameter spreads over
// pservers and streams in bounded pieces.
const MaxBlockFloats = 1 << 20

// Layout is what every role derives identically from the job spec: the model
// and how its parameters are cut into blocks over the pservers.
type Layout struct {
	Model  model.Model
	Sizes  []int
	Blocks []Block
}

// NewLayout derives the layout of spec.
func NewLayout(spec *jobspec.Spec) (*Layout, error) {
	m, err := model.New(spec.Model.ToModel())
	if err != nil {
		return nil, fmt.Errorf("job %s: %w", spec.Name, err)
	}
	var sizes []int
	for _, p := range m.Params() {
		sizes = append(sizes, p.Size())
	}
	blocks, err := Partition(sizes, spec.Pservers, MaxBlockFloats)
	if err != nil {
		return nil, fmt.Errorf("job %s: %w", spec.Name, err)
	}
	return &Layout{Model: m, Sizes: sizes, Blocks: blocks}, nil
}

// NewParams allocates one zeroed slice per parameter.
func (l *Layout) NewParams() [][]float32 {
	out := make([][]float32, len(l.Sizes))
	for i, n := range l.Sizes {
		out[i] = make([]float32, n)
	}
	return out
}
