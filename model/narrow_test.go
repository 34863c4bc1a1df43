package model

import (
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// TestNarrowLayersComputeTheSameValues: a layer computed transposed (see
// narrow) gives the same outputs and weight gradients as computed plainly,
// value for value, for finite values, so that the form never changes a
// model that has not diverged.
func TestNarrowLayersComputeTheSameValues(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, shape := range []struct{ rows, fanIn, fanOut int }{{32, 784, 10}, {64, 300, 1}, {7, 5, 3}, {100, 200, 10}} {
		random := func(r, c int) *mat.Dense {
			d := mat.NewDense(r, c, nil)
			for i := range r {
				for j := range c {
					if rng.IntN(5) > 0 { // zeros too: skipped products
						d.Set(i, j, rng.NormFloat64())
					}
				}
			}
			return d
		}
		a, delta := random(shape.rows, shape.fanIn), random(shape.rows, shape.fanOut)
		ly := layer{w: random(shape.fanIn, shape.fanOut), b: make([]float64, shape.fanOut)}
		for j := range ly.b {
			ly.b[j] = rng.NormFloat64()
		}
		plain, transposed := ly.affineAs(a, nil, false), ly.affineAs(a, nil, true)
		if !mat.Equal(plain, transposed) {
			t.Errorf("%+v: affine differs transposed", shape)
		}
		n := shape.fanIn * shape.fanOut
		g1, g2 := make([]float32, n), make([]float32, n)
		weightGradientAs(g1, make([]float64, n), a, delta, shape.fanIn, shape.fanOut, false)
		weightGradientAs(g2, make([]float64, n), a, delta, shape.fanIn, shape.fanOut, true)
		for i := range g1 {
			if g1[i] != g2[i] {
				t.Fatalf("%+v: weight gradient %d: %v plain, %v transposed", shape, i, g1[i], g2[i])
			}
		}
	}
}
