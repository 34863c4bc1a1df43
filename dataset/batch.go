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

// ToRecBatch lays examples out as a recommender's batch, into b's memory:
// dense features, labels, and per id field (the shard's ShardMeta.IDFields,
// fields of them) the distinct ids in first-appearance order with each
// record's (row, weight) entries. The rows are left for the caller to pull
// (RecField.SizeRows, then the pservers' values of IDs).
func ToRecBatch(b *model.RecBatch, ex []Example, fields int) {
	b.N, b.Dense, b.Y = len(ex), b.Dense[:0], b.Y[:0]
	for _, e := range ex {
		b.Dense = append(b.Dense, e.Features...)
		b.Y = append(b.Y, e.Label)
	}
	b.Fields = slices.Grow(b.Fields[:0], fields)[:fields]
	for f := range b.Fields {
		b.Fields[f].Reset()
		for _, e := range ex {
			var ids []uint64
			var w []float32
			if f < len(e.IDs) {
				ids = e.IDs[f]
			}
			if f < len(e.Weights) && len(e.Weights[f]) > 0 {
				w = e.Weights[f]
			}
			b.Fields[f].Append(ids, w)
		}
	}
}
