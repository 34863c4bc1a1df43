package bench

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

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
// OpenBLAS chose Cooperlake: 1.75x the rate). It runs self, this binary,
// as the child (OpenBLAS reads the variable only as it loads). ok is false
// when there is no pin, or no OpenBLAS, to compare with.
func UnpinnedGemm(self string, dur time.Duration) (u Unpinned, ok bool, err error) {
	pinned := os.Getenv("OPENBLAS_CORETYPE")
	if pinned == "" || os.Getenv(model.ChoseEnv) != "" || !strings.HasPrefix(model.Kernels(), "OpenBLAS") {
		return Unpinned{}, false, nil
	}
	cmd := exec.Command(self)
	cmd.Env = append(slices.DeleteFunc(os.Environ(), func(kv string) bool {
		name, _, _ := strings.Cut(kv, "=")
		return name == "OPENBLAS_CORETYPE" || name == model.ChoseEnv
	}), fmt.Sprintf("%s=%d", UnpinnedGemmChild, dur.Milliseconds()))
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return Unpinned{}, false, fmt.Errorf("the GEMM rate without OPENBLAS_CORETYPE=%s (a child process): %w", pinned, err)
	}
	if err := json.Unmarshal(out, &u); err != nil || u.Kernels == "" || u.Flops <= 0 {
		return Unpinned{}, false, fmt.Errorf("the GEMM rate without OPENBLAS_CORETYPE=%s: its child said %q, want its kernels and a rate", pinned, out)
	}
	u.Pinned = pinned
	return u, true, nil
}

// RunUnpinnedGemmChild is the child's work: its kernels and GemmFlops for
// ms milliseconds a shape, as JSON on stdout.
func RunUnpinnedGemmChild(ms string) error {
	n, err := strconv.Atoi(ms)
	if err != nil || n <= 0 {
		return fmt.Errorf("%s=%q: want milliseconds", UnpinnedGemmChild, ms)
	}
	return json.NewEncoder(os.Stdout).Encode(Unpinned{Kernels: model.Kernels(), Flops: GemmFlops(time.Duration(n) * time.Millisecond)})
}
