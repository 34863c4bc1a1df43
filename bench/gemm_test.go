package bench

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/cpu"

	"github.com/gtrain/gtrain/model"
)

// TestMain makes this test binary UnpinnedGemm's child when asked to, as
// the bench binary's main does.
func TestMain(m *testing.M) {
	if child, err := RunIfUnpinnedGemmChild(); child {
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestUnpinnedGemmLiftsThePin: with an operator's OPENBLAS_CORETYPE (here
// Prescott, OpenBLAS's SSE3 kernels), UnpinnedGemm's child runs the kernels
// the CPU gets without it, and measures them; with no pin, a pin that gave
// the kernels the child runs anyway, gtrain's own choice for an unknown
// CPU, or no OpenBLAS, there is nothing to compare.
func TestUnpinnedGemmLiftsThePin(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	const ms = 10 * time.Millisecond
	t.Setenv(model.ChoseEnv, "")
	t.Setenv("OPENBLAS_CORETYPE", "")
	if _, ok, err := UnpinnedGemm(self, "OpenBLAS Prescott", ms); ok || err != nil {
		t.Fatalf("no pin: ok %v, err %v; want nothing to compare", ok, err)
	}
	t.Setenv("OPENBLAS_CORETYPE", "Prescott")
	if _, ok, err := UnpinnedGemm(self, "gonum pure-Go", ms); ok || err != nil {
		t.Fatalf("a build without OpenBLAS: ok %v, err %v; want nothing to compare", ok, err)
	}
	if !strings.HasPrefix(model.Kernels(), "OpenBLAS") {
		return // the child would measure gonum's kernels: nothing more to see
	}
	u, ok, err := UnpinnedGemm(self, "OpenBLAS Prescott", ms)
	if !cpu.X86.HasAVX2 {
		if ok || err != nil {
			t.Fatalf("pinned Prescott on a CPU without AVX2, where the child runs it too: ok %v, err %v", ok, err)
		}
		return
	}
	if err != nil || !ok {
		t.Fatalf("pinned Prescott: ok %v, err %v", ok, err)
	}
	if u.Pinned != "Prescott" || !strings.HasPrefix(u.Kernels, "OpenBLAS ") || strings.HasPrefix(u.Kernels, "OpenBLAS Prescott") || u.Flops <= 0 {
		t.Fatalf("pinned Prescott on a CPU with AVX2: got %+v, want the CPU's own kernels measured", u)
	}
	if _, ok, err := UnpinnedGemm(self, u.Kernels, ms); ok || err != nil {
		t.Fatalf("a pin that gave the kernels the child runs anyway (%s): ok %v, err %v; want nothing to compare", u.Kernels, ok, err)
	}
	t.Setenv(model.ChoseEnv, "Prescott")
	if _, ok, err := UnpinnedGemm(self, "OpenBLAS Prescott", ms); ok || err != nil {
		t.Fatalf("gtrain's own choice: ok %v, err %v; want nothing to compare", ok, err)
	}
}
