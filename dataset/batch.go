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

// ToRecBatch lays examples out as a recommender's batch, into b's memory:
// dense features, labels, and per id field (the shard's ShardMeta.IDFields,
// fields of them) the distinct ids in first-appearance order with each
// record's (row, weight) entries. The rows are left for the caller to pull
// (RecField.SizeRows, then the pservers' values of IDs).
func ToRecBatch(b *model.RecBatch, ex []Example, fields int) {
	toRecBatch(b, ex, fields, func(f int) int { return f })
}

// ToTableBatch is ToRecBatch for the id fields a model's tables read:
// b's field i is the records' id field fields[i].
func ToTableBatch(b *model.RecBatch, ex []Example, fields []int) {
	toRecBatch(b, ex, len(fields), func(i int) int { return fields[i] })
}

func toRecBatch(b *model.RecBatch, ex []Example, fields int, field func(int) int) {
	b.N, b.Dense, b.Y = len(ex), b.Dense[:0], b.Y[:0]
	for _, e := range ex {
		b.Dense = append(b.Dense, e.Features...)
		b.Y = append(b.Y, e.Label)
	}
	b.Fields = slices.Grow(b.Fields[:0], fields)[:fields]
	for i := range b.Fields {
		b.Fields[i].Reset()
		f := field(i)
		for _, e := range ex {
			var ids []uint64
			if f < len(e.IDs) {
				ids = e.IDs[f]
			}
			w := weightsOf(e, f)
			if len(w) == 0 {
				w = nil // an unweighted record: weight 1 each
			}
			b.Fields[i].Append(ids, w)
		}
	}
}
