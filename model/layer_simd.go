//go:build goexperiment.simd && amd64

package model

import "simd/archsimd"

// Vector forms of the element-wise passes of layer.go: they give the scalar
// loops' bits (the same operations per element, summed in the same order;
// -0 and NaN checked by TestElementwiseVectorsGiveTheScalarBits, though
// which of two NaNs an addition keeps is the compiler's choice on both
// paths), so a gradient does not depend on whether a node has AVX2. Each returns how
// many leading elements it did; the scalar loop does the rest. The three
// were 4.5% of a one-thread MLP step as scalar loops.

var useAVX2 = archsimd.X86.AVX2()

// reluVec is max(v, 0) with the bits Go's max gives: v where v > 0, +0
// for the zeros and negatives, and a NaN with its sign bit cleared (Go
// compiles max as a negated MINSS pair; VMAXPS alone answers its second
// operand for a NaN or two zeros, which no operand order makes agree).
func reluVec(m []float32) int {
	if !useAVX2 {
		return 0
	}
	n := len(m) &^ 7
	zero := archsimd.BroadcastFloat32x8(0)
	magnitude := archsimd.BroadcastInt32x8(0x7fffffff)
	for i := 0; i < n; i += 8 {
		v := archsimd.LoadFloat32x8Slice(m[i:])
		keep := v.Greater(zero).Or(v.NotEqual(v)) // NotEqual holds for a NaN
		v.AsInt32x8().And(magnitude).AsFloat32x8().Masked(keep).StoreSlice(m[i:])
	}
	return n
}

// maskInactiveVec zeroes grad where activation's bits are all 0.
func maskInactiveVec(grad, activation []float32) int {
	if !useAVX2 {
		return 0
	}
	n := len(activation) &^ 7
	zero := archsimd.BroadcastInt32x8(0)
	for i := 0; i < n; i += 8 {
		active := archsimd.LoadFloat32x8Slice(activation[i:]).AsInt32x8().NotEqual(zero)
		archsimd.LoadFloat32x8Slice(grad[i:]).Masked(active).StoreSlice(grad[i:])
	}
	return n
}

// addVec adds src into dst (dst[i] += src[i]) for dst's leading multiple
// of 8.
func addVec(dst, src []float32) int {
	if !useAVX2 {
		return 0
	}
	n := len(dst) &^ 7
	for i := 0; i < n; i += 8 {
		archsimd.LoadFloat32x8Slice(dst[i:]).Add(archsimd.LoadFloat32x8Slice(src[i:])).StoreSlice(dst[i:])
	}
	return n
}

// hasVectors says whether the vector forms run here (tests).
func hasVectors() bool { return useAVX2 }
