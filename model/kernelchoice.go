package model

import (
	"slices"
	"strings"

	"golang.org/x/sys/cpu"
)

// ChoseEnv holds the kernels OpenBLAS chose before gtrain re-executed the
// process with better ones (BetterKernels, roleruntime.UseBetterKernels), so
// that Kernels can say so in every role that inherits the choice.
const ChoseEnv = "GTRAIN_OPENBLAS_CHOSE"

// oldCores are OpenBLAS's x86 kernels without AVX: what it falls back to on
// a CPU newer than its build knows (Debian's 0.3.21 ran "Prescott" on a
// 2026 Xeon VM: a quarter of the speed its SkylakeX kernels reached there).
var oldCores = []string{"Prescott", "Core2", "Penryn", "Dunnington", "Nehalem", "Atom", "Katmai", "Coppermine", "Northwood", "Banias", "Opteron", "Barcelona"}

func isOldCore(core string) bool {
	return slices.ContainsFunc(oldCores, func(c string) bool { return strings.EqualFold(c, core) })
}

// cpuFeatures are what OpenBLAS's AVX kernels need of the CPU and the OS
// (golang.org/x/sys/cpu reports AVX and AVX-512 only where the OS saves
// their registers, as OpenBLAS's own checks do).
type cpuFeatures struct{ avx2, fma, avx512, avx512bf16 bool }

func hostFeatures() cpuFeatures {
	x := cpu.X86
	return cpuFeatures{
		avx2: x.HasAVX2, fma: x.HasFMA,
		avx512:     x.HasAVX512F && x.HasAVX512BW && x.HasAVX512VL && x.HasAVX512DQ && x.HasAVX512CD,
		avx512bf16: x.HasAVX512BF16,
	}
}

// bestCore is the OpenBLAS kernel set for a CPU with these features, as
// OpenBLAS's own fallback by features chooses for a CPU its table does not
// name (AVX-512 with BF16: Cooperlake, as for a Sapphire Rapids it knows;
// AVX-512: SkylakeX; AVX2: Haswell, where it would pick Zen for an AMD it
// knows, the same AVX2 kernels under another name); "" below AVX2 with FMA.
// Debian's 0.3.21 does not take the name "Cooperlake" from
// OPENBLAS_CORETYPE ("Core not found" with OPENBLAS_VERBOSE=2) and then
// chooses by features itself, which lands on Cooperlake on such a CPU:
// model.Kernels reports what it runs, and says "gtrain's choice" only when
// that is the kernel named.
func bestCore(f cpuFeatures) string {
	switch {
	case !f.avx2 || !f.fma:
		return ""
	case f.avx512 && f.avx512bf16:
		return "Cooperlake"
	case f.avx512:
		return "SkylakeX"
	}
	return "Haswell"
}

// betterKernels is what to run instead of chosen, OpenBLAS's kernels: the
// best the CPU's features allow when chosen is one without AVX and no
// operator pinned one (an OPENBLAS_CORETYPE, even an old one, stands:
// KernelWarning speaks of it); "" when chosen stands.
func betterKernels(pinned, chosen string, f cpuFeatures) string {
	if pinned != "" || !isOldCore(chosen) {
		return ""
	}
	return bestCore(f)
}

// avx512Cores are OpenBLAS's x86 kernels that use AVX-512.
var avx512Cores = []string{"SkylakeX", "Cooperlake", "SapphireRapids"}

// pinnedBelow is, when an operator's OPENBLAS_CORETYPE pins kernels
// without AVX-512 (Haswell, Zen) on a CPU with AVX-512, the kernels the
// CPU could run instead; "" otherwise (kernels without AVX are
// KernelWarning's). One VM's environment pinned Haswell on a Zen 5, whose
// Cooperlake kernels multiplied 1.75-2x faster (docs/performance.md).
func pinnedBelow(pinned, core string, f cpuFeatures) string {
	if pinned == "" || !f.avx512 || isOldCore(core) || slices.ContainsFunc(avx512Cores, func(c string) bool { return strings.EqualFold(c, core) }) {
		return ""
	}
	return bestCore(f)
}
