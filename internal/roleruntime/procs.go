// Package roleruntime sizes the Go runtime of a role process (gtraind
// trainer, gtraind pserver) to what its job spec requested, and puts a
// gtraind process on the OpenBLAS kernels its CPU can run (kernels.go). It
// owns no state; callers call it once, and only where the role is its
// process's only tenant (never in tests that share a process).
package roleruntime

import (
	"log/slog"
	"math"
	"os"
	"runtime"
)

// LimitProcs sets GOMAXPROCS to the CPUs the role asked for (cpu, rounded
// up, at least 1). A role granted a fraction of a core and given every
// core by default spreads each step over threads that wake each other
// (gRPC's reader and writer, gonum's matrix workers): on a small host that
// costs more than the work. cpu 0 (not stated) and a GOMAXPROCS set in the
// environment by the operator leave the runtime as it is. It returns the
// value in force.
func LimitProcs(cpu float64, log *slog.Logger) int {
	if cpu <= 0 || os.Getenv("GOMAXPROCS") != "" {
		return runtime.GOMAXPROCS(0)
	}
	n := min(int(math.Ceil(cpu)), runtime.NumCPU())
	n = max(n, 1)
	if n != runtime.GOMAXPROCS(0) {
		runtime.GOMAXPROCS(n)
		log.Info("GOMAXPROCS set from resources", "cpu", cpu, "procs", n)
	}
	return n
}

// LimitComputeProcs is LimitProcs for a role that computes on threads of
// its own (a trainer's built-in model): it returns the threads to compute
// on, the CPUs asked for (0 when none were: GOMAXPROCS then), and leaves
// the runtime one P more than that. A goroutine coming back from a cgo
// call (OpenBLAS) needs a free P: with as many Ps as compute threads, it
// waits for the network goroutines receiving and sending the parameters to
// give theirs up, up to a scheduler time slice.
//
// own is the CPUs the agent gave the role for its computation alone
// (--exclusive-cpus): the process starts on the shared ones, which
// runtime.NumCPU counts, so those count too.
func LimitComputeProcs(cpu float64, own int, log *slog.Logger) (threads int) {
	if cpu <= 0 || os.Getenv("GOMAXPROCS") != "" {
		return 0
	}
	threads = max(min(int(math.Ceil(cpu)), max(runtime.NumCPU(), own)), 1)
	if runtime.GOMAXPROCS(0) != threads+1 {
		runtime.GOMAXPROCS(threads + 1)
		log.Info("GOMAXPROCS set from resources", "cpu", cpu, "compute_threads", threads, "procs", threads+1)
	}
	return threads
}

// Raise sets GOMAXPROCS to n for a while, if n is more than in force, and
// returns what puts it back. A master runs on one core, but its pass-end
// evaluation, during which no step runs, multiplies the whole test set
// (gonum goes parallel).
func Raise(n int) (restore func()) {
	before := runtime.GOMAXPROCS(0)
	if n <= before {
		return func() {}
	}
	runtime.GOMAXPROCS(n)
	return func() { runtime.GOMAXPROCS(before) }
}
