package model

import (
	"fmt"
	"slices"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
)

// layer is one affine map in float64, converted from the float32 parameters.
type layer struct {
	w *mat.Dense // fanIn × fanOut, row-major like the stored parameter
	b []float64  // fanOut
}

// layersFrom views float64 parameters (weight, bias, weight, bias, ...) as layers without copying.
func layersFrom(ps []ParamSpec, params [][]float64) []layer {
	layers := make([]layer, len(ps)/2)
	for l := range layers {
		shape := ps[2*l].Shape
		layers[l] = layer{w: mat.NewDense(shape[0], shape[1], params[2*l]), b: params[2*l+1]}
	}
	return layers
}

func widenAll(params [][]float32) [][]float64 {
	out := make([][]float64, len(params))
	for j, p := range params {
		out[j] = widen(p)
	}
	return out
}

// affine returns a·W + b (b added to every row); buf (may be nil) is
// scratch memory it may grow.
func (ly layer) affine(a *mat.Dense, buf *[]float64) *mat.Dense {
	rows, _ := a.Dims()
	_, fanOut := ly.w.Dims()
	return ly.affineAs(a, buf, narrow(fanOut, rows))
}

// affineAs is affine, computed transposed or not.
func (ly layer) affineAs(a *mat.Dense, buf *[]float64, transposed bool) *mat.Dense {
	rows, fanIn := a.Dims()
	_, fanOut := ly.w.Dims()
	z := mat.NewDense(rows, fanOut, nil)
	if transposed {
		// zᵀ = Wᵀ·aᵀ: the same products summed in the same order (over
		// W's rows) in rows-long strides instead of fanOut-long ones.
		if buf == nil {
			buf = new([]float64)
		}
		*buf = slices.Grow((*buf)[:0], fanIn*rows)[:fanIn*rows]
		at := mat.NewDense(fanIn, rows, *buf)
		at.Copy(a.T())
		zt := mat.NewDense(fanOut, rows, nil)
		zt.Mul(ly.w.T(), at)
		z.Copy(zt.T())
	} else {
		z.Mul(a, ly.w)
	}
	for r := range rows {
		floats.Add(z.RawRowView(r), ly.b)
	}
	return z
}

// narrow reports whether a layer of fanOut outputs over rows records is
// computed transposed. gonum multiplies a row of one matrix into a row of
// the result at a time: a·W goes fanOut values at a time, which for a
// classifier's 10 outputs is mostly call overhead; transposed it goes rows
// values at a time. Each output sums the same products in the same order
// either way, so finite parameters and inputs give the same values. gonum
// skips a product whose left factor is 0: the plain form skips zero
// inputs, the transposed one zero weights, so with an infinite weight (a
// diverged model) on an input that is 0 one form gives NaN where the other
// gives a number. The form depends only on the layer and the micro-batch
// size, so every trainer computes a micro-batch the same way.
func narrow(fanOut, rows int) bool { return fanOut < rows }

// batchMatrix views the batch features as an N × Inputs matrix without copying.
func batchMatrix(b Batch) *mat.Dense {
	return mat.NewDense(b.N, b.Inputs, b.X)
}

func widen(p []float32) []float64 {
	out := make([]float64, len(p))
	widenInto(out, p)
	return out
}

// widenInto converts p into dst, of the same length.
func widenInto(dst []float64, p []float32) {
	for i, v := range p {
		dst[i] = float64(v)
	}
}

func addInto(dst []float32, src []float64) {
	for i, v := range src {
		dst[i] += float32(v)
	}
}

// CheckParams reports whether params has one slice per ParamSpec of m, each
// of length Size(). Errors wrap ErrParamMismatch.
func CheckParams(m Model, params [][]float32) error {
	return checkParams(m.Params(), params)
}

func checkParams(ps []ParamSpec, params [][]float32) error {
	if len(params) != len(ps) {
		return fmt.Errorf("got %d parameter slices, want %d: %w", len(params), len(ps), ErrParamMismatch)
	}
	for j, p := range ps {
		if len(params[j]) != p.Size() {
			return fmt.Errorf("param %q: len %d, want %d (shape %v): %w",
				p.Name, len(params[j]), p.Size(), p.Shape, ErrParamMismatch)
		}
	}
	return nil
}
