//go:build cgo && openblas

package model

/*
#cgo pkg-config: openblas
#include <cblas.h>
*/
import "C"

import (
	"fmt"
	"os"
	"strings"

	"gonum.org/v1/netlib/blas/netlib"
)

// OpenBLAS runs single-threaded: gtrain cuts products into tiles and runs
// them on its own threads (gemm.go), so that the summation order of every
// value is fixed whatever the thread count. OpenBLAS's own threading would
// also split only rows and columns, but at boundaries that move with the
// thread count, where edge kernels may sum differently.
func init() { C.openblas_set_num_threads(1) }

var fastGemm sgemm = netlib.Implementation{}

// Kernels names the matrix-multiply library and the kernel it chose for
// this CPU: trainers computing the same micro-batch give bit-identical
// gradients when they name the same kernels.
func Kernels() string {
	core := corename()
	k := "OpenBLAS " + core
	if chose := os.Getenv(ChoseEnv); chose != "" && strings.EqualFold(os.Getenv("OPENBLAS_CORETYPE"), core) {
		k += fmt.Sprintf(" (gtrain's choice for this CPU; OpenBLAS chose %s)", chose)
	}
	if C.openblas_get_parallel() == 2 {
		// The OpenMP build follows omp_get_max_threads on each call, not
		// openblas_set_num_threads: it needs OMP_NUM_THREADS=1 (the agent
		// sets it for its roles) to keep one thread per call.
		k += " (OpenMP build)"
	}
	return k
}

func corename() string { return C.GoString(C.openblas_get_corename()) }

// BetterKernels says which OpenBLAS kernels this process should run instead
// of those OpenBLAS chose (better), and those (chose): better is "" unless
// OpenBLAS fell back to kernels without AVX on a CPU it does not know, with
// no OPENBLAS_CORETYPE pinned, and the CPU has what better ones need.
// OpenBLAS reads OPENBLAS_CORETYPE only as it loads, so only a new process
// image can take them (roleruntime.UseBetterKernels).
func BetterKernels() (better, chose string) {
	chose = corename()
	return betterKernels(os.Getenv("OPENBLAS_CORETYPE"), chose, hostFeatures()), chose
}

// PinNote says, when an operator's OPENBLAS_CORETYPE holds OpenBLAS to
// AVX2 kernels on a CPU with AVX-512, what that costs and when to keep it:
// a deliberate pin keeps a mixed cluster's bits identical (README, "When
// bits may differ"), so it is a note, not a warning; "" otherwise.
func PinNote() string {
	core := corename()
	pinned := os.Getenv("OPENBLAS_CORETYPE")
	if os.Getenv(ChoseEnv) != "" {
		return "" // gtrain's own choice, not an operator's pin
	}
	want := pinnedBelow(pinned, core, hostFeatures())
	if want == "" {
		return ""
	}
	return fmt.Sprintf("OPENBLAS_CORETYPE=%s pins its %s kernels, without AVX-512, on a CPU with AVX-512, where AVX-512 kernels (%s, say) may multiply up to twice as fast (make bench's trainer_mlp_gemm note measures both): keep the pin if it keeps a mixed cluster's trainers on the same bits, otherwise remove it from the agent's environment", pinned, core, want)
}

// KernelWarning says, when OpenBLAS runs kernels without AVX on a CPU that
// has AVX2, what to pin instead; "" otherwise.
func KernelWarning() string {
	core := corename()
	want := bestCore(hostFeatures())
	if want == "" || !isOldCore(core) {
		return ""
	}
	why := "OpenBLAS does not know this CPU and runs"
	if pinned := os.Getenv("OPENBLAS_CORETYPE"); pinned != "" {
		why = fmt.Sprintf("OPENBLAS_CORETYPE=%s pins", pinned)
	}
	return fmt.Sprintf("%s its %s kernels, without AVX, on a CPU with AVX2, at a fraction of the speed: set OPENBLAS_CORETYPE=%s in the agent's environment (systemd: Environment=OPENBLAS_CORETYPE=%s), which its roles inherit", why, core, want, want)
}
