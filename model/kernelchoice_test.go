package model

import "testing"

// TestBetterKernels: gtrain replaces OpenBLAS's choice only when it fell
// back to kernels without AVX, nobody pinned one, and the CPU can run
// better ones; then it picks what OpenBLAS picks for a CPU it knows.
func TestBetterKernels(t *testing.T) {
	avx2 := cpuFeatures{avx2: true, fma: true}
	avx512 := cpuFeatures{avx2: true, fma: true, avx512: true}
	bf16 := cpuFeatures{avx2: true, fma: true, avx512: true, avx512bf16: true}
	cases := []struct {
		pinned, chose string
		f             cpuFeatures
		want          string
	}{
		{"", "Prescott", bf16, "Cooperlake"}, // a Sapphire Rapids VM its build does not know
		{"", "prescott", avx512, "SkylakeX"},
		{"", "Nehalem", avx2, "Haswell"},
		{"", "Prescott", cpuFeatures{avx2: true}, ""}, // AVX2 without FMA: no AVX2 kernel runs
		{"", "Prescott", cpuFeatures{}, ""},           // a CPU without AVX2: Prescott is right
		{"Prescott", "Prescott", bf16, ""},            // an operator's pin stands
		{"", "Haswell", bf16, ""},                     // an AVX choice stands
		{"", "Zen", avx2, ""},
		{"", "Cooperlake", bf16, ""},
	}
	for _, c := range cases {
		if got := betterKernels(c.pinned, c.chose, c.f); got != c.want {
			t.Errorf("pinned %q, chose %q, %+v: got %q, want %q", c.pinned, c.chose, c.f, got, c.want)
		}
	}
}
