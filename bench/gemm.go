package bench

import (
	"runtime"
	"time"

	"github.com/gtrain/gtrain/model"
)

// GemmFlops is the machine's float32 GEMM rate on one thread with the
// build's kernels (model.Kernels): the best FLOP/s over the MLP's own
// product shapes, the pieces a trainer cuts them into (256×256 tiles of a
// forward or delta product, a 200-row band of the first weight gradient:
// model/gemm.go) and a 1024³ square, each timed for about dur. It bounds
// what one core can do for a model made of these products.
func GemmFlops(dur time.Duration) float64 {
	// One thread: gonum's pure-Go sgemm (a build without OpenBLAS) spreads
	// a product over GOMAXPROCS goroutines, and this process has every core.
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	best := 0.0
	for _, s := range [][3]int{{256, 1024, 784}, {784, 1024, 256}, {256, 1024, 1024}, {1024, 1024, 256}, {1024, 1024, 1024},
		{256, 256, 784}, {256, 256, 1024}, {200, 1024, 256}} {
		m, n, k := s[0], s[1], s[2]
		a, b, c := make([]float32, m*k), make([]float32, k*n), make([]float32, m*n)
		for i := range a {
			a[i] = float32(i%7) - 3
		}
		for i := range b {
			b[i] = float32(i%5) - 2
		}
		model.Multiply(m, n, k, a, b, c) // warm: pages, packing buffers
		calls := 0
		start := time.Now()
		for time.Since(start) < dur {
			model.Multiply(m, n, k, a, b, c)
			calls++
		}
		best = max(best, 2*float64(m*n*k)*float64(calls)/time.Since(start).Seconds())
	}
	return best
}
