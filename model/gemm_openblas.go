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
	"slices"
	"strings"

	"golang.org/x/sys/cpu"
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
	k := "OpenBLAS " + C.GoString(C.openblas_get_corename())
	if C.openblas_get_parallel() == 2 {
		// The OpenMP build follows omp_get_max_threads on each call, not
		// openblas_set_num_threads: it needs OMP_NUM_THREADS=1 (the agent
		// sets it for its roles) to keep one thread per call.
		k += " (OpenMP build)"
	}
	return k
}

// oldCores are OpenBLAS's x86 kernels without AVX: what it falls back to on
// a CPU newer than its build knows (Debian's 0.3.21 ran "Prescott" on a
// 2026 Xeon: a quarter of the speed its SkylakeX kernels reached there).
var oldCores = []string{"Prescott", "Core2", "Penryn", "Dunnington", "Nehalem", "Atom", "Katmai", "Coppermine", "Northwood", "Banias", "Opteron", "Barcelona"}

// KernelWarning says, when OpenBLAS runs kernels without AVX on a CPU that
// has AVX2, what to pin instead; "" otherwise.
func KernelWarning() string {
	core := C.GoString(C.openblas_get_corename())
	if !cpu.X86.HasAVX2 || !slices.ContainsFunc(oldCores, func(c string) bool { return strings.EqualFold(c, core) }) {
		return ""
	}
	want := "Haswell"
	if cpu.X86.HasAVX512F {
		want = "SkylakeX"
	}
	why := "OpenBLAS does not know this CPU and runs"
	if pinned := os.Getenv("OPENBLAS_CORETYPE"); pinned != "" {
		why = fmt.Sprintf("OPENBLAS_CORETYPE=%s pins", pinned)
	}
	return fmt.Sprintf("%s its %s kernels, without AVX, on a CPU with AVX2, at a fraction of the speed: set OPENBLAS_CORETYPE=%s in the agent's environment (systemd: Environment=OPENBLAS_CORETYPE=%s), which its roles inherit", why, core, want, want)
}
