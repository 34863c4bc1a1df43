package bench

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/gtrain/gtrain/internal/roleruntime"
	"github.com/gtrain/gtrain/model"
)

// GemmFlops is the machine's float32 GEMM rate on one thread with the
// build's kernels (model.Kernels): the best FLOP/s over the MLP's own
// product shapes, the pieces a trainer cuts them into (256×256 tiles of a
// forward or delta product, a 200-row band of the first weight gradient:
// model/gemm.go) and a 1024³ square, each timed for about dur. It bounds
// what one core can do for a model made of these products.
func GemmFlops(dur time.Duration) float64 {
	// One thread: gonum's pure-Go sgemm (a build without OpenBLAS) spreads
	// a product over GOMAXPROCS goroutines, and this process has every core.
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	best := 0.0
	for _, s := range [][3]int{{256, 1024, 784}, {784, 1024, 256}, {256, 1024, 1024}, {1024, 1024, 256}, {1024, 1024, 1024},
		{256, 256, 784}, {256, 256, 1024}, {200, 1024, 256}} {
		m, n, k := s[0], s[1], s[2]
		a, b, c := make([]float32, m*k), make([]float32, k*n), make([]float32, m*n)
		for i := range a {
			a[i] = float32(i%7) - 3
		}
		for i := range b {
			b[i] = float32(i%5) - 2
		}
		model.Multiply(m, n, k, a, b, c) // warm: pages, packing buffers
		calls := 0
		start := time.Now()
		for time.Since(start) < dur {
			model.Multiply(m, n, k, a, b, c)
			calls++
		}
		best = max(best, 2*float64(m*n*k)*float64(calls)/time.Since(start).Seconds())
	}
	return best
}

// UnpinnedGemmChild is the environment variable that makes the bench binary
// the child of UnpinnedGemm: it prints its kernels and their GemmFlops, timed
// for the variable's value in milliseconds.
const UnpinnedGemmChild = "GTRAIN_BENCH_UNPINNED_GEMM_MS"

// Unpinned is what a process of this machine runs with no OPENBLAS_CORETYPE:
// the kernels OpenBLAS chooses for the CPU (or gtrain, for a CPU OpenBLAS
// does not know) and their GemmFlops.
type Unpinned struct {
	Pinned  string  `json:"-"` // this environment's OPENBLAS_CORETYPE
	Kernels string  `json:"kernels"`
	Flops   float64 `json:"flops"`
}

// UnpinnedGemm measures, when this environment pins OpenBLAS's kernels (an
// operator's OPENBLAS_CORETYPE, not gtrain's own choice for a CPU OpenBLAS
// does not know), which kernels a process without the pin runs and their
// GEMM rate: the machine's, where the pin may hold every side here to
// slower ones (one VM's environment pinned Haswell on a Zen 5, where
// OpenBLAS chose Cooperlake: 1.75-2x the rate). It runs self, this binary,
// as the child (OpenBLAS reads the variable only as it loads). ours names
// the kernels the pin gave this process (model.Kernels). ok is false when
// there is nothing to compare: no pin, no OpenBLAS, or a pin that changed
// nothing (a name OpenBLAS does not know, which it ignores, or the kernels
// it would choose anyway), where two timings of the same kernels would
// only measure the machine's drift.
func UnpinnedGemm(self, ours string, dur time.Duration) (u Unpinned, ok bool, err error) {
	pinned := os.Getenv("OPENBLAS_CORETYPE")
	if pinned == "" || os.Getenv(model.ChoseEnv) != "" || !strings.HasPrefix(ours, "OpenBLAS") {
		return Unpinned{}, false, nil
	}
	cmd := exec.Command(self)
	cmd.Env = append(roleruntime.WithoutEnv(os.Environ(), "OPENBLAS_CORETYPE", model.ChoseEnv), fmt.Sprintf("%s=%d", UnpinnedGemmChild, dur.Milliseconds()))
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return Unpinned{}, false, fmt.Errorf("a child process measuring the GEMM rate without OPENBLAS_CORETYPE=%s: %w (its stderr is above)", pinned, err)
	}
	if err := json.Unmarshal(out, &u); err != nil || u.Kernels == "" || u.Flops <= 0 {
		return Unpinned{}, false, fmt.Errorf("a child process measuring the GEMM rate without OPENBLAS_CORETYPE=%s said %q, want its kernels and a rate", pinned, out)
	}
	u.Pinned = pinned
	return u, u.Kernels != ours, nil
}

// RunIfUnpinnedGemmChild does UnpinnedGemm's child's work when this process
// is that child (ran): it chooses its kernels as a role would
// (roleruntime.UseBetterKernels, which may execute it again first), then
// prints them and their GemmFlops as JSON on stdout. The bench binary's main
// and this package's tests call it first thing.
func RunIfUnpinnedGemmChild() (ran bool, err error) {
	ms := os.Getenv(UnpinnedGemmChild)
	if ms == "" {
		return false, nil
	}
	roleruntime.UseBetterKernels()
	n, err := strconv.Atoi(ms)
	if err != nil || n <= 0 {
		return true, fmt.Errorf("%s=%q: want milliseconds", UnpinnedGemmChild, ms)
	}
	return true, json.NewEncoder(os.Stdout).Encode(Unpinned{Kernels: model.Kernels(), Flops: GemmFlops(time.Duration(n) * time.Millisecond)})
}
