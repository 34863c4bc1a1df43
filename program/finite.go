package program

import (
	"math"
	"unsafe"
)

// firstNonFinite is the index of the first NaN or ±Inf in v, or -1. It
// reads every gradient of every answer (1 Mi floats take about 0.1 ms
// this way, 2 ms a float at a time), so it tests two floats per 64-bit word
// and looks closer only at a block that holds one.
func firstNonFinite(v []float32) int {
	i := 0
	for ; i < len(v) && uintptr(unsafe.Pointer(&v[i]))%8 != 0; i++ {
		if !finite(v[i]) {
			return i
		}
	}
	const block = 16 // floats: 8 words
	for ; i+block <= len(v); i += block {
		w := unsafe.Slice((*uint64)(unsafe.Pointer(&v[i])), block/2)
		if nonFiniteIn(w[0])|nonFiniteIn(w[1])|nonFiniteIn(w[2])|nonFiniteIn(w[3])|
			nonFiniteIn(w[4])|nonFiniteIn(w[5])|nonFiniteIn(w[6])|nonFiniteIn(w[7]) != 0 {
			break // found in this block: the loop below says where
		}
	}
	for ; i < len(v); i++ {
		if !finite(v[i]) {
			return i
		}
	}
	return -1
}

// nonFiniteIn has bit 31 or 63 set when the float32 in that half of w has
// an all-ones exponent (NaN or Inf): the exponent mask plus 1 in the
// exponent's lowest bit carries into the sign bit exactly then, and never
// across halves.
func nonFiniteIn(w uint64) uint64 {
	const exp, one, signs = 0x7f8000007f800000, 0x0080000000800000, 0x8000000080000000
	return ((w & exp) + one) & signs
}

func finite(x float32) bool { return math.Float32bits(x)&0x7f800000 != 0x7f800000 }
