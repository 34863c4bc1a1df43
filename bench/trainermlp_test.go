package bench

import (
	"strings"
	"testing"

	"github.com/gtrain/gtrain/model"
)

// TestKernelsAgainst: a peer on OpenBLAS shares the environment's kernels
// with gtrain; a peer on MKL is said to run other ones.
// A pure-Go build of gtrain runs other kernels than any peer.
func TestKernelsAgainst(t *testing.T) {
	openblas := []string{"/usr/lib/x86_64-linux-gnu/openblas-pthread/libopenblasp-r0.3.21.so"}
	got := KernelsAgainst(openblas)
	if !strings.HasPrefix(model.Kernels(), "OpenBLAS") {
		if !strings.Contains(got, "gtrain on gonum pure-Go") || strings.Contains(got, "both sides") {
			t.Errorf("a pure-Go build against an OpenBLAS peer: %q", got)
		}
		return
	}
	if !strings.HasPrefix(got, "both sides on ") {
		t.Errorf("OpenBLAS peer: %q", got)
	}
	got = KernelsAgainst([]string{"MKL (linked into torch: BLAS_INFO=mkl)"})
	if !strings.Contains(got, "the peer on MKL") || !strings.Contains(got, "not OpenBLAS") {
		t.Errorf("MKL peer: %q", got)
	}
}

// TestPeerAtItsBest: a PyTorch peer on OpenBLAS or MKL is compared with;
// one on Debian's reference BLAS (what scripts/peerblas.py reads from the
// memory maps of a torch whose libblas.so.3 alternative is netlib's), or on
// nothing the scripts could see, is not.
func TestPeerAtItsBest(t *testing.T) {
	for _, c := range []struct {
		blas []string
		want bool
	}{
		{[]string{"/usr/lib/x86_64-linux-gnu/openblas-pthread/libopenblasp-r0.3.21.so"}, true},
		{[]string{"MKL (linked into torch: BLAS_INFO=mkl)"}, true},
		{[]string{"/usr/lib/x86_64-linux-gnu/blas/libblas.so.3.11.0"}, false},
		{[]string{"BLAS_INFO=generic"}, false},
		{nil, false},
	} {
		if got := PeerAtItsBest(c.blas); got != c.want {
			t.Errorf("PeerAtItsBest(%q) = %v, want %v", c.blas, got, c.want)
		}
	}
}
