package program

import (
	"math"
	"testing"
)

// TestFirstNonFinite: every position of a NaN or an Inf is found, also
// behind an unaligned start and in a tail shorter than a block; the
// largest finite values and subnormals are finite.
func TestFirstNonFinite(t *testing.T) {
	backing := make([]float32, 70)
	for i := range backing {
		backing[i] = []float32{math.MaxFloat32, -math.MaxFloat32, 1e-45, -0.0, 3}[i%5]
	}
	for _, start := range []int{0, 1} {
		v := backing[start:]
		if got := firstNonFinite(v); got != -1 {
			t.Fatalf("start %d: finite values, got %d", start, got)
		}
		for i := range v {
			for _, bad := range []float32{float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1))} {
				keep := v[i]
				v[i] = bad
				if got := firstNonFinite(v); got != i {
					t.Fatalf("start %d: %v at %d, found at %d", start, bad, i, got)
				}
				v[i] = keep
			}
		}
	}
}
