package bench

import (
	"strings"
	"testing"
)

// TestKernelsAgainst: a peer on OpenBLAS shares the environment's kernels
// with gtrain; a peer on MKL is said to run other ones.
func TestKernelsAgainst(t *testing.T) {
	if got := KernelsAgainst([]string{"/usr/lib/x86_64-linux-gnu/openblas-pthread/libopenblasp-r0.3.21.so"}); !strings.HasPrefix(got, "both sides on ") {
		t.Errorf("OpenBLAS peer: %q", got)
	}
	got := KernelsAgainst([]string{"MKL (linked into torch: BLAS_INFO=mkl)"})
	if !strings.Contains(got, "the peer on MKL") || !strings.Contains(got, "not OpenBLAS") {
		t.Errorf("MKL peer: %q", got)
	}
}
