//go:build goexperiment.simd && amd64

package pserver

import "simd/archsimd"

// The vector kernels do exactly the scalar loops' operations in the same
// order (no fused multiply-add), so results are bit-identical to the scalar
// path: a run's model does not depend on which build trained it. Each returns
// how many leading elements it updated; the scalar loop does the rest.

var useAVX2 = archsimd.X86.AVX2()

func sgdVec(p, g []float32, lr float32) int {
	if !useAVX2 {
		return 0
	}
	n := len(p) &^ 7
	vlr := archsimd.BroadcastFloat32x8(lr)
	for i := 0; i < n; i += 8 {
		pv := archsimd.LoadFloat32x8Slice(p[i:])
		gv := archsimd.LoadFloat32x8Slice(g[i:])
		pv.Sub(vlr.Mul(gv)).StoreSlice(p[i:])
	}
	return n
}

func momentumVec(p, g, v []float32, lr, mu float32) int {
	if !useAVX2 {
		return 0
	}
	n := len(p) &^ 7
	vlr, vmu := archsimd.BroadcastFloat32x8(lr), archsimd.BroadcastFloat32x8(mu)
	for i := 0; i < n; i += 8 {
		vi := vmu.Mul(archsimd.LoadFloat32x8Slice(v[i:])).Add(archsimd.LoadFloat32x8Slice(g[i:]))
		vi.StoreSlice(v[i:])
		archsimd.LoadFloat32x8Slice(p[i:]).Sub(vlr.Mul(vi)).StoreSlice(p[i:])
	}
	return n
}

func adagradVec(p, g, a []float32, lr, eps float32) int {
	if !useAVX2 {
		return 0
	}
	n := len(p) &^ 7
	vlr, veps := archsimd.BroadcastFloat32x8(lr), archsimd.BroadcastFloat32x8(eps)
	for i := 0; i < n; i += 8 {
		gi := archsimd.LoadFloat32x8Slice(g[i:])
		ai := archsimd.LoadFloat32x8Slice(a[i:]).Add(gi.Mul(gi))
		ai.StoreSlice(a[i:])
		step := vlr.Mul(gi).Div(ai.Sqrt().Add(veps))
		archsimd.LoadFloat32x8Slice(p[i:]).Sub(step).StoreSlice(p[i:])
	}
	return n
}

func adamVec(p, g, m, v []float32, b1, b2, oneMinusB1, oneMinusB2, lrT, epsT float32) int {
	if !useAVX2 {
		return 0
	}
	n := len(p) &^ 7
	vb1, vb2 := archsimd.BroadcastFloat32x8(b1), archsimd.BroadcastFloat32x8(b2)
	vc1, vc2 := archsimd.BroadcastFloat32x8(oneMinusB1), archsimd.BroadcastFloat32x8(oneMinusB2)
	vlr, veps := archsimd.BroadcastFloat32x8(lrT), archsimd.BroadcastFloat32x8(epsT)
	for i := 0; i < n; i += 8 {
		gi := archsimd.LoadFloat32x8Slice(g[i:])
		mi := vb1.Mul(archsimd.LoadFloat32x8Slice(m[i:])).Add(vc1.Mul(gi))
		vi := vb2.Mul(archsimd.LoadFloat32x8Slice(v[i:])).Add(vc2.Mul(gi).Mul(gi))
		mi.StoreSlice(m[i:])
		vi.StoreSlice(v[i:])
		step := vlr.Mul(mi).Div(vi.Sqrt().Add(veps))
		archsimd.LoadFloat32x8Slice(p[i:]).Sub(step).StoreSlice(p[i:])
	}
	return n
}

// The gradient's own passes (pserver/shard.go): the check for non-finite
// values and the division by the record count, each a scalar loop over the
// whole shard per step that the compiler does not vectorize; here by hand,
// with the scalar loops' operations. The sum of micro-batches is
// model.AddInto's.

// finiteVec is how many leading elements of v are known finite: it stops
// at the first 8 that hold a NaN or an infinity (an all-ones exponent),
// whose exact index the scalar loop finds.
func finiteVec(v []float32) int {
	if !useAVX2 {
		return 0
	}
	n := len(v) &^ 7
	exp := archsimd.BroadcastUint32x8(0x7f800000)
	for i := 0; i < n; i += 8 {
		if archsimd.LoadFloat32x8Slice(v[i:]).AsUint32x8().And(exp).Equal(exp).ToBits() != 0 {
			return i
		}
	}
	return n
}

func scaleVec(v []float32, k float32) int {
	if !useAVX2 {
		return 0
	}
	n := len(v) &^ 7
	vk := archsimd.BroadcastFloat32x8(k)
	for i := 0; i < n; i += 8 {
		archsimd.LoadFloat32x8Slice(v[i:]).Mul(vk).StoreSlice(v[i:])
	}
	return n
}
