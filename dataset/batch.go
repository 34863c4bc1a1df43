package dataset

import "github.com/gtrain/gtrain/model"

// ToBatch lays examples out as a model batch (float64, row-major).
func ToBatch(ex []Example) model.Batch {
	if len(ex) == 0 {
		return model.Batch{}
	}
	in := len(ex[0].Features)
	b := model.Batch{N: len(ex), Inputs: in, X: make([]float64, 0, len(ex)*in), Y: make([]float64, 0, len(ex))}
	for _, e := range ex {
		for _, f := range e.Features {
			b.X = append(b.X, float64(f))
		}
		b.Y = append(b.Y, float64(e.Label))
	}
	return b
}
