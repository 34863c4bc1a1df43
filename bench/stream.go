package bench

import (
	"fmt"
	"math"
	"time"
)

// The optimizer ceilings are STREAM-style loops with the optimizer's own
// memory traffic per parameter and the least arithmetic that touches it, so
// no optimizer can beat them on the same machine: SGD reads p and g and
// writes p (p += g here), Adam reads p, g, m, v and writes p, m, v.
var streamArrays = map[string]int{"sgd": 2, "adam": 4} // arrays read; all but g are written

// StreamCeiling returns parameters/s of the fastest sweep of the
// STREAM-style loop with kind's memory traffic over n parameters, of iters
// sweeps (vectorised like the optimizer kernels of this build).
func StreamCeiling(kind string, n, iters int) (paramsPerSec float64, err error) {
	arrays, ok := streamArrays[kind]
	if !ok || n < 1 || iters < 1 {
		return 0, fmt.Errorf("stream ceiling: kind %q (sgd|adam), n %d, iters %d (both >= 1)", kind, n, iters)
	}
	a := make([][]float32, arrays)
	for i := range a {
		a[i] = make([]float32, n)
		for j := range a[i] {
			a[i][j] = float32(j%7) * 1e-3
		}
	}
	// Several loop shapes with the same traffic: the ceiling is the fastest
	// of them, so no shape the optimizer's kernel happens to have beats it.
	shapes := []func([][]float32){streamSGD, streamSGDPlain}
	if arrays == 4 {
		shapes = []func([][]float32){streamAdam}
	}
	for _, sweep := range shapes {
		paramsPerSec = max(paramsPerSec, timeSweeps(sweep, a, n, iters))
	}
	return paramsPerSec, nil
}

// timeSweeps returns the rate of the fastest of iters sweeps: the ceiling is
// the loop's peak, which the optimizer's rate, an average over its sweeps,
// cannot exceed on the same machine.
func timeSweeps(sweep func([][]float32), a [][]float32, n, iters int) float64 {
	sweep(a) // fault pages in before timing
	fastest := time.Duration(math.MaxInt64)
	for range iters {
		start := time.Now()
		sweep(a)
		fastest = min(fastest, time.Since(start))
	}
	return float64(n) / fastest.Seconds()
}

// a[0] is p, a[1] is g (read only), a[2], a[3] are Adam's moments.
func streamSGD(a [][]float32) {
	p, g := a[0], a[1]
	i := addVec(p, g)
	for ; i < len(p); i++ {
		p[i] += g[i]
	}
}

// streamSGDPlain is streamSGD's traffic in the kernel's own shape (eight
// floats a loop, not unrolled).
func streamSGDPlain(a [][]float32) {
	p, g := a[0], a[1]
	i := addVec8(p, g)
	for ; i < len(p); i++ {
		p[i] += g[i]
	}
}

func streamAdam(a [][]float32) {
	p, g, m, v := a[0], a[1], a[2], a[3]
	i := add3Vec(p, m, v, g)
	for ; i < len(p); i++ {
		x := g[i]
		m[i] += x
		v[i] += x
		p[i] += x
	}
}
