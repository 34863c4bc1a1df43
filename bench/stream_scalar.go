//go:build !(goexperiment.simd && amd64)

package bench

// Without GOEXPERIMENT=simd the optimizers run scalar loops, and so does
// the ceiling.

func addVec(p, g []float32) int        { return 0 }
func addVec8(p, g []float32) int       { return 0 }
func add3Vec(p, m, v, g []float32) int { return 0 }
