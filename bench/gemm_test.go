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
	if ms := os.Getenv(UnpinnedGemmChild); ms != "" {
		if err := RunUnpinnedGemmChild(ms); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestUnpinnedGemmLiftsThePin: with an operator's OPENBLAS_CORETYPE (here
// Prescott, OpenBLAS's SSE3 kernels), UnpinnedGemm's child runs the kernels
// OpenBLAS chooses without it, and measures them; with no pin, or with
// gtrain's own choice for an unknown CPU, there is nothing to compare.
func TestUnpinnedGemmLiftsThePin(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv(model.ChoseEnv, "")
	t.Setenv("OPENBLAS_CORETYPE", "")
	if _, ok, err := UnpinnedGemm(self, 10*time.Millisecond); ok || err != nil {
		t.Fatalf("no pin: ok %v, err %v; want nothing to compare", ok, err)
	}
	t.Setenv("OPENBLAS_CORETYPE", "Prescott")
	u, ok, err := UnpinnedGemm(self, 10*time.Millisecond)
	if !strings.HasPrefix(model.Kernels(), "OpenBLAS") {
		if ok || err != nil {
			t.Fatalf("a build without OpenBLAS: ok %v, err %v; want nothing to compare", ok, err)
		}
		return
	}
	if err != nil || !ok {
		t.Fatalf("pinned Prescott: ok %v, err %v", ok, err)
	}
	if u.Pinned != "Prescott" || !strings.HasPrefix(u.Kernels, "OpenBLAS ") || u.Flops <= 0 {
		t.Fatalf("pinned Prescott: got %+v", u)
	}
	if cpu.X86.HasAVX2 && strings.Contains(u.Kernels, "Prescott") {
		t.Fatalf("the child still ran the pinned kernels on a CPU with AVX2: %+v", u)
	}
	t.Setenv(model.ChoseEnv, "Prescott")
	if _, ok, err := UnpinnedGemm(self, 10*time.Millisecond); ok || err != nil {
		t.Fatalf("gtrain's own choice: ok %v, err %v; want nothing to compare", ok, err)
	}
}
