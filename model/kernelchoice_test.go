package model

import "testing"

// The feature sets of the tests' CPUs.
var (
	avx2   = cpuFeatures{avx2: true, fma: true}
	avx512 = cpuFeatures{avx2: true, fma: true, avx512: true}
	bf16   = cpuFeatures{avx2: true, fma: true, avx512: true, avx512bf16: true}
)

// TestBetterKernels: gtrain replaces OpenBLAS's choice only when it fell
// back to kernels without AVX, nobody pinned one, and the CPU can run
// better ones; then it picks what OpenBLAS picks for a CPU it knows.
func TestBetterKernels(t *testing.T) {
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

// TestPinnedBelow: an operator's pin of AVX2 kernels on a CPU with AVX-512
// names the kernels the CPU could run; no pin, a pin of AVX-512 kernels, a
// CPU without AVX-512, or kernels without AVX (KernelWarning's) do not.
func TestPinnedBelow(t *testing.T) {
	cases := []struct {
		pinned, core string
		f            cpuFeatures
		want         string
	}{
		{"Haswell", "Haswell", bf16, "Cooperlake"}, // the Zen 5 VM's environment
		{"zen", "Zen", avx512, "SkylakeX"},
		{"", "Haswell", bf16, ""},          // OpenBLAS's own choice
		{"Haswell", "Haswell", avx2, ""},   // the best this CPU runs
		{"SkylakeX", "SkylakeX", bf16, ""}, // AVX-512 kernels
		{"Prescott", "Prescott", bf16, ""}, // KernelWarning's
		{"Cooperlake", "Cooperlake", bf16, ""},
	}
	for _, c := range cases {
		if got := pinnedBelow(c.pinned, c.core, c.f); got != c.want {
			t.Errorf("pinned %q, core %q, %+v: got %q, want %q", c.pinned, c.core, c.f, got, c.want)
		}
	}
}
