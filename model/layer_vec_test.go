package model

import (
	"math"
	"math/rand/v2"
	"testing"
)

// specialFloats are the values whose bits an element-wise pass could get
// wrong: zeros of both signs, NaNs (quiet, signalling, with payloads and
// signs), infinities, subnormals and the extremes.
func specialFloats() []float32 {
	bits := []uint32{0x00000000, 0x80000000, 0x7fc00000, 0xffc00000, 0x7f800001, 0x7fa5a5a5, 0xff800001,
		0x7f800000, 0xff800000, 0x00000001, 0x80000001, 0x007fffff, 0x807fffff, 0x7f7fffff, 0xff7fffff}
	out := make([]float32, len(bits))
	for i, b := range bits {
		out[i] = math.Float32frombits(b)
	}
	return append(out, 1, -1, 0.5, -2.5e-20, 3e30)
}

// vecCase is n values drawn from the special ones and from normal ones.
func vecCase(rng *rand.Rand, n int) []float32 {
	sp := specialFloats()
	out := make([]float32, n)
	for i := range out {
		if rng.IntN(3) == 0 {
			out[i] = sp[rng.IntN(len(sp))]
		} else {
			out[i] = float32(rng.NormFloat64())
		}
	}
	return out
}

func sameBits(t *testing.T, what string, got, want []float32) {
	t.Helper()
	for i := range want {
		if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
			t.Fatalf("%s: element %d is %#08x, want %#08x", what, i, math.Float32bits(got[i]), math.Float32bits(want[i]))
		}
	}
}

// TestElementwiseVectorsGiveTheScalarBits: the vector forms of the ReLU,
// its mask and the column sums (layer_simd.go, used where the build has
// GOEXPERIMENT=simd and the CPU AVX2) give the scalar loops' bits, every
// special value included, for lengths with and without a scalar tail. The
// scalar loops are written out here as the definition.
func TestElementwiseVectorsGiveTheScalarBits(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for _, n := range []int{0, 1, 7, 8, 9, 64, 1000, 1027} {
		in := vecCase(rng, n)
		got, want := append([]float32(nil), in...), append([]float32(nil), in...)
		reluInPlace(got)
		for i, v := range want {
			want[i] = max(v, 0)
		}
		sameBits(t, "relu", got, want)

		act, grad := vecCase(rng, n), vecCase(rng, n)
		for i := range act {
			if rng.IntN(2) == 0 {
				act[i] = 0 // half the units inactive
			}
		}
		got, want = append([]float32(nil), grad...), append([]float32(nil), grad...)
		maskInactive(got, act)
		for i, a := range act {
			if math.Float32bits(a) == 0 {
				want[i] = 0
			}
		}
		sameBits(t, "mask", got, want)

		const rows = 5
		m := vecCase(rng, rows*n)
		base := vecCase(rng, n)
		got, want = append([]float32(nil), base...), append([]float32(nil), base...)
		addColumnSums(got, m, rows)
		for r := range rows {
			for j := range n {
				want[j] += m[r*n+j]
			}
		}
		sameBits(t, "column sums", got, want)
	}
	if !hasVectors() {
		t.Log("no vector forms in this build or on this CPU (GOEXPERIMENT=simd, AVX2): the scalar loops were compared with themselves")
	} else if n := reluVec(make([]float32, 16)); n != 16 {
		t.Fatalf("the vector ReLU did %d of 16 elements on a CPU with AVX2", n)
	}
}
