//go:build cgo && openblas

package model

/*
#cgo pkg-config: openblas
#include <cblas.h>
*/
import "C"

import "gonum.org/v1/netlib/blas/netlib"

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
