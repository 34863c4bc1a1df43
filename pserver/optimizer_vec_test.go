package pserver

import (
	"math"
	"math/rand/v2"
	"testing"
)

// scalarReference is the textbook loop of each optimizer, element by element,
// in the same operation order as the production code promises.
func scalarReference(kind string, c OptimizerConfig, p, g []float32, slots [][]float32, t int64) {
	lr := float32(c.LearningRate)
	switch kind {
	case "sgd":
		for i := range p {
			p[i] -= lr * g[i]
		}
	case "momentum":
		mu := float32(c.Momentum)
		for i := range p {
			slots[0][i] = mu*slots[0][i] + g[i]
			p[i] -= lr * slots[0][i]
		}
	case "adagrad":
		eps := float32(c.Epsilon)
		for i := range p {
			slots[0][i] += g[i] * g[i]
			p[i] -= lr * g[i] / (float32(math.Sqrt(float64(slots[0][i]))) + eps)
		}
	case "adam":
		c1 := 1 - math.Pow(c.Beta1, float64(t))
		c2 := math.Sqrt(1 - math.Pow(c.Beta2, float64(t)))
		lrT, epsT := float32(c.LearningRate*c2/c1), float32(c.Epsilon*c2)
		b1, b2 := float32(c.Beta1), float32(c.Beta2)
		o1, o2 := float32(1-c.Beta1), float32(1-c.Beta2)
		for i := range p {
			slots[0][i] = b1*slots[0][i] + o1*g[i]
			slots[1][i] = b2*slots[1][i] + o2*g[i]*g[i]
			p[i] -= lrT * slots[0][i] / (float32(math.Sqrt(float64(slots[1][i]))) + epsT)
		}
	}
}

// TestVectorKernelsMatchScalarBitForBit: whichever build trains (with or
// without GOEXPERIMENT=simd), the model is the same to the last bit.
func TestVectorKernelsMatchScalarBitForBit(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, kind := range []string{"sgd", "momentum", "adagrad", "adam"} {
		c := OptimizerConfig{Kind: kind, LearningRate: 0.03}.WithDefaults()
		opt, err := NewOptimizer(c)
		if err != nil {
			t.Fatal(err)
		}
		const n = 1003 // not a multiple of the vector width
		p1, g := make([]float32, n), make([]float32, n)
		for i := range p1 {
			p1[i], g[i] = float32(r.NormFloat64()), float32(r.NormFloat64())
		}
		p2 := append([]float32(nil), p1...)
		s1, s2 := make([][]float32, opt.Slots()), make([][]float32, opt.Slots())
		for k := range s1 {
			s1[k], s2[k] = make([]float32, n), make([]float32, n)
		}
		for step := int64(1); step <= 4; step++ {
			opt.Update(p1, g, s1, step)
			scalarReference(kind, c, p2, g, s2, step)
		}
		for i := range p1 {
			if math.Float32bits(p1[i]) != math.Float32bits(p2[i]) {
				t.Fatalf("%s: element %d: %v (optimizer) vs %v (scalar reference)", kind, i, p1[i], p2[i])
			}
		}
	}
}

// TestGradientKernelsMatchScalar: the vector passes over a gradient give
// the scalar loops' bits, and the check finds the first non-finite value
// wherever it lies (in a vector, in the tail, two in one vector).
func TestGradientKernelsMatchScalar(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	const n = 1003 // not a multiple of the vector width
	a, b := make([]float32, n), make([]float32, n)
	for i := range a {
		a[i], b[i] = float32(r.NormFloat64()), float32(r.NormFloat64())
	}
	want := append([]float32(nil), a...)
	k := float32(1) / 3
	for i := range want {
		want[i] += b[i]
		want[i] *= k
	}
	got := append([]float32(nil), a...)
	addInto(got, b)
	scale(got, k)
	for i := range got {
		if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
			t.Fatalf("value %d: %v, the scalar loops give %v", i, got[i], want[i])
		}
	}
	if i := nonFinite(a); i != -1 {
		t.Fatalf("nonFinite of finite values: %d", i)
	}
	bad := []float32{float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1))}
	for _, at := range []int{0, 5, 8, 517, 1000, 1002} {
		for _, x := range bad {
			v := append([]float32(nil), a...)
			v[at] = x
			if at+1 < n {
				v[at+1] = x // a second one after it must not be the answer
			}
			if i := nonFinite(v); i != at {
				t.Errorf("%v at %d: nonFinite says %d", x, at, i)
			}
		}
	}
}
