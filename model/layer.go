package model

import (
	"fmt"
	"math"
)

// layerShape is one affine map's weight shape: fanIn × fanOut, row-major
// like the stored parameter, followed by a bias of fanOut.
type layerShape struct{ fanIn, fanOut int }

func layerShapes(ps []ParamSpec) []layerShape {
	shapes := make([]layerShape, len(ps)/2)
	for l := range shapes {
		shapes[l] = layerShape{fanIn: ps[2*l].Shape[0], fanOut: ps[2*l].Shape[1]}
	}
	return shapes
}

// setRows writes v into every row of the rows×len(v) matrix m.
func setRows(m []float32, rows int, v []float32) {
	for r := range rows {
		copy(m[r*len(v):(r+1)*len(v)], v)
	}
}

// reluInPlace replaces each value by max(v, 0).
func reluInPlace(m []float32) {
	for i := reluVec(m); i < len(m); i++ {
		m[i] = max(m[i], 0)
	}
}

// maskInactive zeroes the gradient of units whose ReLU output was 0 (the
// derivative at exactly 0 is taken as 0). A ReLU output is +0 or more (or
// NaN), so "was 0" is "has all bits 0": the mask is computed without a
// branch, which about half the units would mispredict (a branch made this
// loop 7% of an MLP step).
func maskInactive(grad, activation []float32) {
	grad = grad[:len(activation)]
	for i := maskInactiveVec(grad, activation); i < len(activation); i++ {
		b := int32(math.Float32bits(activation[i]))
		keep := uint32((b | -b) >> 31) // all ones unless b is 0
		grad[i] = math.Float32frombits(math.Float32bits(grad[i]) & keep)
	}
}

// addColumnSums adds the column sums of the rows×len(dst) matrix m into
// dst, record after record (a fixed order: bias gradients are bit-stable).
func addColumnSums(dst, m []float32, rows int) {
	w := len(dst)
	for r := range rows {
		AddInto(dst, m[r*w:(r+1)*w])
	}
}

// AddInto adds src into dst element by element (dst[i] += src[i], src at
// least as long as dst), eight at a time where AVX2 runs (layer_simd.go),
// with the scalar loop's bits. The pserver sums micro-batches with it too.
func AddInto(dst, src []float32) {
	src = src[:len(dst)]
	for i := addVec(dst, src); i < len(dst); i++ {
		dst[i] += src[i]
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
