package dataset

import (
	"slices"

	"github.com/gtrain/gtrain/model"
)

// ToBatch lays examples out as a model batch (float32, row-major).
func ToBatch(ex []Example) model.Batch {
	return ToBatchReusing(model.Batch{}, ex)
}

// ToBatchReusing is ToBatch into the memory of reuse's X and Y (their contents are
// overwritten): a trainer converts a micro-batch per step, and 64 records
// of 784 features are 400 KB of garbage otherwise.
func ToBatchReusing(reuse model.Batch, ex []Example) model.Batch {
	if len(ex) == 0 {
		return model.Batch{}
	}
	in := len(ex[0].Features)
	b := model.Batch{N: len(ex), Inputs: in, X: slices.Grow(reuse.X[:0], len(ex)*in), Y: slices.Grow(reuse.Y[:0], len(ex))}
	for _, e := range ex {
		b.X = append(b.X, e.Features...)
		b.Y = append(b.Y, e.Label)
	}
	return b
}
