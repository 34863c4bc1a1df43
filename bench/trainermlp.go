package bench

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/gtrain/gtrain/model"
)

// MLP is the compute issue's model: 784-1024-1024-10 at a global batch of
// 256 (1.86 M parameters).
const (
	mlpGlobalBatch = 256
	// MLPFlopsPerRecord is the multiply-adds (×2) of one record's training
	// step: the forward products, the weight gradients, and the input
	// gradients of every layer but the first. Element-wise work is left
	// out, so records/s × this never exceeds the GEMM rate.
	MLPFlopsPerRecord = 2*(784*1024+1024*1024+1024*10)*2 + 2*(1024*1024+1024*10)
	// mlpWarmup, mlpMeasured and mlpWindows stay inside the first pass of
	// Fashion-MNIST (59,400 training records: 232 steps of 256), and so
	// do the mlpCPUSteps after them whose CPU time is measured.
	mlpWarmup, mlpMeasured, mlpWindows, mlpCPUSteps = 20, 40, 3, 60
)

// printCPUPerStep prints each role's CPU ms per step over the next
// mlpCPUSteps steps (what moving the parameters costs shows there, also on
// a loaded machine), and the wall time a trainer's micro-batch took to
// compute over them, or why either could not be measured. The steps are
// not those whose time records/s is measured over: on a VM whose speed
// drifts the two are not to be subtracted.
func printCPUPerStep(m *measurer, work string) {
	cpu, err := m.cpuPerStep(mlpCPUSteps, work)
	if err != nil {
		fmt.Fprintf(os.Stderr, "  cpu per step: not measured: %v\n", err)
		return
	}
	computing := fmt.Sprintf("a trainer's micro-batch computed in %.1f ms of wall time (gtrain_trainer_compute_seconds)", cpu.computeMs)
	if cpu.computeErr != nil {
		computing = fmt.Sprintf("compute time not measured: %v", cpu.computeErr)
	}
	fmt.Fprintf(os.Stderr, "  over the %d steps after the timed ones: cpu per step: trainers %.1f ms, pservers %.1f ms, master %.1f ms; %s\n",
		mlpCPUSteps, cpu.roles["trainer"], cpu.roles["pserver"], cpu.roles["master"], computing)
}

// MLPRun is one trainer_mlp job: trainers trainers of cpu cores each and
// Pservers pservers (0: 2, as the issue measured).
type MLPRun struct {
	Trainers int
	CPU      float64
	Pservers int
}

// ScalingPservers is the pservers of the scaling curve's run of trainers
// trainers: half as many (at least 2). Each pserver sums every trainer's
// micro-batch of its shard and sends each trainer its shard back, so with
// a fixed 2 the pservers, not the trainers, set the pace past a few
// trainers (16 trainers on 2 pservers spent 263 ms of pserver CPU a step
// on a 16-core machine).
func ScalingPservers(trainers int) int { return max(2, trainers/2) }

// MLPRecordsPerSecond trains the MLP on Fashion-MNIST with a real dev agent
// (real master, 2 pservers and trainers, as the issue measured) for each run,
// and returns records/s: the global batch over the median step time of 3
// windows of 40 steps, after 20 steps of warm-up, inside the first pass.
// With exclusiveCPUs the agent runs with --exclusive-cpus: a trainer of
// whole CPUs computes on CPUs of its own while one CPU or more stays
// shared (daemon/supervisor, cpus.go).
func MLPRecordsPerSecond(binDir string, exclusiveCPUs bool, runs []MLPRun) ([]float64, error) {
	// Its roles serve their metrics: printCPUPerStep reads the trainers'
	// compute time there. Only this group's agent has them, so that the
	// others (pserver_memory's peak memory, say) measure what they did.
	flags := []string{"--metrics-addr", freeAddr()}
	if exclusiveCPUs {
		flags = append(flags, "--exclusive-cpus")
	}
	a, work, err := newFashionAgent(binDir, "gtrain-bench-mlp", flags...)
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(work)
	defer a.stop()
	var out []float64
	for i, r := range runs {
		name := fmt.Sprintf("mlp-%d", i)
		if err := a.submit(mlpSpec(work, name, r)); err != nil {
			return nil, err
		}
		m := &measurer{cli: a.cli, job: name}
		ms, err := m.medianStepMs(mlpWarmup, mlpMeasured, mlpWindows)
		if err == nil {
			printCPUPerStep(m, work)
		}
		a.stopJob(name)
		time.Sleep(time.Second) // let its processes go before the next job
		if err != nil {
			return nil, err
		}
		out = append(out, mlpGlobalBatch/(ms/1000))
		fmt.Fprintf(os.Stderr, "  %d trainer(s) of cpu %g: %.1f ms per step\n", r.Trainers, r.CPU, ms)
	}
	return out, nil
}

func mlpSpec(work, name string, r MLPRun) string {
	pservers := r.Pservers
	if pservers == 0 {
		pservers = 2
	}
	return fmt.Sprintf(`name: %s
mode: sync
trainers: %d
pservers: %d
passes: 5
batch_size: %d
global_batch: %d
seed: 1
model: {kind: mlp, inputs: 784, outputs: 10, hidden: [1024, 1024]}
optimizer: {kind: sgd, learning_rate: 0.01}
data: {train: %s/data/fashion-train-*, test: %s/data/fashion-test-*}
resources:
  trainer: {cpu: %g, memory: 256Mi}
  pserver: {cpu: 0.1, memory: 128Mi}
`, name, r.Trainers, pservers, mlpGlobalBatch/r.Trainers, mlpGlobalBatch, work, work, r.CPU)
}

// TorchMLP is the peer's figure: scripts/torch_mlp.py's records/s and the
// BLAS libraries it ran on.
type TorchMLP struct {
	RecordsPerS float64  `json:"records_per_s"`
	Threads     int      `json:"threads"`   // torch_mlp.py
	Processes   int      `json:"processes"` // ddp_mlp.py
	BLAS        []string `json:"blas"`
	Torch       string   `json:"torch"`
}

// PeerEnv is the environment of a PyTorch peer: this process's, with glibc's
// malloc keeping freed memory for the next step, as gtrainprog does for a
// program (keep_freed_memory, in examples/program/gtrainprog.py, which
// says why): the same settings, so that the peer is at its best (its MLP
// ran 6,400-6,800 records/s without them and 9,000-9,500 with them here).
func PeerEnv() []string {
	return append(os.Environ(), "MALLOC_MMAP_THRESHOLD_=33554432", "MALLOC_TRIM_THRESHOLD_=134217728", "MALLOC_TOP_PAD_=16777216")
}

// SameKernels says which OpenBLAS kernels both sides of a comparison run:
// the peers and gtrain's roles (and its programs) inherit this process's
// environment, so an OPENBLAS_CORETYPE there pins them all alike (one
// machine here pinned Haswell; OpenBLAS itself chose Cooperlake, 1.6x
// faster on the MLP, for both).
func SameKernels() string {
	if c, chose := os.Getenv("OPENBLAS_CORETYPE"), os.Getenv(model.ChoseEnv); c != "" && chose != "" {
		return "both sides on OPENBLAS_CORETYPE=" + c + " (gtrain's choice for this CPU; OpenBLAS chose " + chose + ")"
	} else if c != "" {
		return "both sides on OPENBLAS_CORETYPE=" + c + " (this environment's)"
	}
	return "both sides on the kernels OpenBLAS chose for this CPU"
}

// KernelsAgainst is SameKernels for a peer whose BLAS is peerBLAS (what
// scripts/torch_mlp.py reports): a PyTorch wheel on MKL runs other kernels
// than gtrain's OpenBLAS whatever the environment pins, and a pure-Go
// build of gtrain others than any peer's, and it says so.
func KernelsAgainst(peerBLAS []string) string {
	ours := strings.HasPrefix(model.Kernels(), "OpenBLAS")
	if ours && loaded(peerBLAS, "openblas") {
		return SameKernels()
	}
	peer := strings.Join(peerBLAS, " ")
	if ours {
		peer += ", not OpenBLAS"
	}
	return fmt.Sprintf("gtrain on %s; the peer on %s: the two run other kernels", model.Kernels(), peer)
}

// PeerAtItsBest reports whether a PyTorch peer whose BLAS is blas (what the
// peer scripts report, scripts/peerblas.py) runs at its best: on OpenBLAS
// or MKL. Against Debian's reference BLAS, 30x slower, a ratio would say
// nothing of gtrain.
func PeerAtItsBest(blas []string) bool { return loaded(blas, "openblas", "mkl") }

// loaded reports whether a peer's BLAS (what the peer scripts report)
// names one of libs (lower case).
func loaded(blas []string, libs ...string) bool {
	return slices.ContainsFunc(blas, func(b string) bool {
		b = strings.ToLower(b)
		return slices.ContainsFunc(libs, func(lib string) bool { return strings.Contains(b, lib) })
	})
}

// TorchPython is the python3 whose PyTorch the peers (and the program
// benchmarks' programs) use: Debian's, with python3-torch on OpenBLAS, unless
// GTRAIN_PEER_PYTHON names another (a lent machine whose PyTorch lives in a
// virtual environment and cannot install Debian's; the bench notes then say
// which BLAS that PyTorch runs on, as they always do). The program
// benchmarks run it in the sandbox, as another user: it must be readable
// there (not under /root).
var TorchPython = cmp.Or(os.Getenv("GTRAIN_PEER_PYTHON"), DefaultTorchPython)

// DefaultTorchPython is Debian's python3, which python3-torch serves.
const DefaultTorchPython = "/usr/bin/python3"

// HasTorch reports whether the peer can run: TorchPython imports torch and
// numpy (the program helpers and the peers need both).
func HasTorch() bool {
	return exec.Command(TorchPython, "-c", "import torch, numpy").Run() == nil
}

// RunTorchMLP runs the single-process PyTorch peer on threads threads.
func RunTorchMLP(scriptsDir string, threads int) (TorchMLP, error) {
	return runPeer(scriptsDir, "torch_mlp.py", fmt.Sprint(threads))
}

// RunDDPMLP runs the PyTorch DDP peer (gloo, CPU) with processes processes.
func RunDDPMLP(scriptsDir string, processes int) (TorchMLP, error) {
	return runPeer(scriptsDir, "ddp_mlp.py", fmt.Sprint(processes))
}

// runPeer runs a peer script with TorchPython and reads its JSON line.
func runPeer(scriptsDir, script string, args ...string) (TorchMLP, error) {
	cmd := exec.Command(TorchPython, append([]string{filepath.Join(scriptsDir, script)}, args...)...)
	cmd.Env = PeerEnv()
	out, err := cmd.Output()
	if err != nil {
		return TorchMLP{}, fmt.Errorf("%s %s: %w%s", script, strings.Join(args, " "), err, stderrTail(err))
	}
	var r TorchMLP
	if err := json.Unmarshal(out, &r); err != nil {
		return TorchMLP{}, fmt.Errorf("%s printed %q: %w", script, out, err)
	}
	return r, nil
}

// stderrTail is what a failed peer last wrote to its stderr (at most 4
// lines), for its error: "exit status 1" alone says nothing of the cause.
func stderrTail(err error) string {
	var ee *exec.ExitError
	if !errors.As(err, &ee) || len(bytes.TrimSpace(ee.Stderr)) == 0 {
		return ""
	}
	lines := strings.Split(strings.TrimSpace(string(ee.Stderr)), "\n")
	return "; stderr: " + strings.Join(lines[max(0, len(lines)-4):], " | ")
}
