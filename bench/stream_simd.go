//go:build goexperiment.simd && amd64

package bench

import "simd/archsimd"

var useAVX2 = archsimd.X86.AVX2()

// addVec does p += g eight floats at a time, as the SGD kernel loads and
// stores; it returns how many leading elements it did.
func addVec(p, g []float32) int {
	if !useAVX2 {
		return 0
	}
	// Unrolled twice: the ceiling pays less loop overhead than the kernel.
	n := len(p) &^ 15
	for i := 0; i < n; i += 16 {
		g0, g1 := archsimd.LoadFloat32x8Slice(g[i:]), archsimd.LoadFloat32x8Slice(g[i+8:])
		archsimd.LoadFloat32x8Slice(p[i:]).Add(g0).StoreSlice(p[i:])
		archsimd.LoadFloat32x8Slice(p[i+8:]).Add(g1).StoreSlice(p[i+8:])
	}
	return n
}

// addVec8 is addVec without the unrolling.
func addVec8(p, g []float32) int {
	if !useAVX2 {
		return 0
	}
	n := len(p) &^ 7
	for i := 0; i < n; i += 8 {
		gv := archsimd.LoadFloat32x8Slice(g[i:])
		archsimd.LoadFloat32x8Slice(p[i:]).Add(gv).StoreSlice(p[i:])
	}
	return n
}

// add3Vec does m += g, v += g, p += g in one sweep, as the Adam kernel
// loads and stores.
func add3Vec(p, m, v, g []float32) int {
	if !useAVX2 {
		return 0
	}
	n := len(p) &^ 7
	for i := 0; i < n; i += 8 {
		gv := archsimd.LoadFloat32x8Slice(g[i:])
		archsimd.LoadFloat32x8Slice(m[i:]).Add(gv).StoreSlice(m[i:])
		archsimd.LoadFloat32x8Slice(v[i:]).Add(gv).StoreSlice(v[i:])
		archsimd.LoadFloat32x8Slice(p[i:]).Add(gv).StoreSlice(p[i:])
	}
	return n
}
