package bench

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gtrain/gtrain/internal/testing/torchtest"
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
// one on Debian's reference BLAS (what scripts/peerblas.py names for a
// torch whose libblas.so.3 alternative is netlib's), or on nothing the
// scripts could see, is not.
func TestPeerAtItsBest(t *testing.T) {
	for _, c := range []struct {
		blas []string
		want bool
	}{
		{[]string{"/usr/lib/x86_64-linux-gnu/openblas-pthread/libblas.so.3"}, true},
		{[]string{"MKL (linked into torch: BLAS_INFO=mkl)"}, true},
		{[]string{"OpenBLAS (linked into torch: BLAS_INFO=open)"}, true},
		{[]string{"/usr/lib/x86_64-linux-gnu/blas/libblas.so.3.11.0"}, false},
		{[]string{"BLAS_INFO=generic, sgemm_ not found"}, false},
		{nil, false},
	} {
		if got := PeerAtItsBest(c.blas); got != c.want {
			t.Errorf("PeerAtItsBest(%q) = %v, want %v", c.blas, got, c.want)
		}
	}
}

// TestPeerBLASIsTheSgemmTorchCalls: scripts/peerblas.py names the file
// whose sgemm_ Debian's torch calls, not every BLAS its process maps. A
// libblas.so.3 of the test's own put in front (as the reference BLAS is
// when only the libblas.so.3 alternative points to it: OpenBLAS's
// liblapack.so.3, and numpy's BLAS, stay mapped) is named alone, and such
// a peer is refused.
func TestPeerBLASIsTheSgemmTorchCalls(t *testing.T) {
	torchtest.Need(t)
	dir := t.TempDir()
	src, shim := filepath.Join(dir, "shim.c"), filepath.Join(dir, "libblas.so.3")
	if err := os.WriteFile(src, []byte("void sgemm_(void) {}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	// Every other symbol from OpenBLAS, which it keeps mapped.
	build := exec.Command("cc", "-shared", "-fPIC", "-o", shim, src, "-Wl,-soname,libblas.so.3", "-Wl,--no-as-needed", "-lopenblas")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the shim (gcc, libopenblas-dev): %v\n%s", err, out)
	}
	blas := func(env ...string) []string {
		t.Helper()
		cmd := exec.Command(torchtest.Python, "-c", "import json; from peerblas import blas_loaded; print(json.dumps(blas_loaded()))")
		cmd.Dir, cmd.Env = "../scripts", append(os.Environ(), env...)
		out, err := cmd.Output()
		var got []string
		if err == nil {
			err = json.Unmarshal(out, &got)
		}
		if err != nil {
			t.Fatalf("peerblas.py %v: %v (%s)", env, err, out)
		}
		return got
	}
	if got := blas(); !PeerAtItsBest(got) {
		t.Errorf("Debian's torch on OpenBLAS (libopenblas0-pthread) was refused: %q", got)
	}
	want, err := filepath.EvalSymlinks(shim)
	if err != nil {
		t.Fatal(err)
	}
	if got := blas("LD_LIBRARY_PATH=" + dir); len(got) != 1 || got[0] != want || PeerAtItsBest(got) {
		t.Errorf("torch calling the sgemm_ of %s: peerblas.py says %q, at its best: %v", want, got, PeerAtItsBest(got))
	}
}

// TestStderrTail: a failed peer's error carries its last lines of stderr.
func TestStderrTail(t *testing.T) {
	_, err := exec.Command("sh", "-c", "for i in 1 2 3 4 5; do echo line$i >&2; done; exit 1").Output()
	if got := stderrTail(err); got != "; stderr: line2 | line3 | line4 | line5" {
		t.Errorf("stderrTail = %q", got)
	}
	if got := stderrTail(exec.Command("false").Run()); got != "" {
		t.Errorf("a run whose stderr was not kept: %q", got)
	}
}
