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

// FieldBatch is one id field of a batch in the layout nn.EmbeddingBag takes:
// the ids of all records concatenated, record i's being
// IDs[Offsets[i]:Offsets[i+1]], with their weights alike for a weighted field
// (nil for the others).
type FieldBatch struct {
	Name    string
	IDs     []uint64
	Offsets []int // len(records)+1
	Weights []float32
}

// BatchIDs lays out the ids of a batch's records per field of fields (the
// shard's ShardMeta.IDFields): what a trainer pulls rows for and pools.
func BatchIDs(fields []IDField, ex []Example) []FieldBatch {
	out := make([]FieldBatch, len(fields))
	for f, field := range fields {
		fb := FieldBatch{Name: field.Name, Offsets: make([]int, 1, len(ex)+1)}
		for _, e := range ex {
			fb.IDs = append(fb.IDs, e.IDs[f]...)
			if field.Weighted {
				fb.Weights = append(fb.Weights, weightsOf(e, f)...)
			}
			fb.Offsets = append(fb.Offsets, len(fb.IDs))
		}
		out[f] = fb
	}
	return out
}

// Unique returns the distinct ids of the field, ascending: the rows a trainer
// pulls for the batch (each once, whatever its count in the batch).
func (fb FieldBatch) Unique() []uint64 {
	ids := slices.Clone(fb.IDs)
	slices.Sort(ids)
	return slices.Compact(ids)
}
