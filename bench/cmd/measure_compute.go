package main

import (
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/gtrain/gtrain/bench"
	"github.com/gtrain/gtrain/model"
)

// measureTrainerMLP is trainer_mlp (one trainer, cpu: 1) against
// single-threaded PyTorch and against the GEMM ceiling, trainer_mlp_threads
// (cpu: 2) against twice cpu: 1, and scaling_mlp (2 trainers of cpu: 1 at
// the same global batch) against twice one trainer.
func measureTrainerMLP(t *table, bin string) error {
	flops := bench.GemmFlops(300 * time.Millisecond)
	gemmCeiling := flops / bench.MLPFlopsPerRecord
	rps, err := bench.MLPRecordsPerSecond(bin, []bench.MLPRun{{Trainers: 1, CPU: 1}, {Trainers: 1, CPU: 2}, {Trainers: 2, CPU: 1}})
	if err != nil {
		return err
	}
	one, threads, two := rps[0], rps[1], rps[2]
	sides := fmt.Sprintf("gtrain: %s, 1 thread per cpu; MLP 784-1024-1024-10 on Fashion-MNIST, global batch 256, 2 pservers, sgd; the median of 3 windows of 40 steps after 20, inside pass 0", model.Kernels())
	if bench.HasTorch() {
		peer, err := bench.RunTorchMLP("scripts", 1)
		if err != nil {
			return err
		}
		t.add(bench.Result{Name: "trainer_mlp", Value: one, Unit: "records/s", Ceiling: peer.RecordsPerS,
			Note: fmt.Sprintf("peer, not a ceiling: single-process PyTorch %s on %d thread, BLAS %s, same model and batch, random data; %s; goal ratio >= 1.0", peer.Torch, peer.Threads, strings.Join(peer.BLAS, " "), sides)})
	} else {
		notMeasured("trainer_mlp (against PyTorch)", "python3-torch libopenblas0-pthread")
	}
	t.add(bench.Result{Name: "trainer_mlp_gemm", Value: one, Unit: "records/s", Ceiling: gemmCeiling,
		Note: fmt.Sprintf("ceiling: the best single-thread float32 GEMM rate of this build's kernels over the model's product shapes (%.1f GFLOP/s) / %d FLOPs per record; %s", flops/1e9, bench.MLPFlopsPerRecord, sides)})
	t.add(bench.Result{Name: "trainer_mlp_threads", Value: threads, Unit: "records/s", Ceiling: 2 * one,
		Note: fmt.Sprintf("cpu: 2 against twice cpu: 1 (%.0f records/s): speedup %.2fx (goal >= 1.7x, ratio >= 0.85); %s", one, threads/one, sides)})
	t.add(bench.Result{Name: "scaling_mlp", Value: two, Unit: "records/s", Ceiling: 2 * one,
		Note: fmt.Sprintf("2 trainers of cpu: 1 (micro-batches of 128) against twice 1 trainer: the ratio is the scaling efficiency; on this machine the pservers, master and agent share its cores; %s", sides)})
	return nil
}

// notMeasured says which figure a missing dependency left out and what to
// install for it.
func notMeasured(what, packages string) {
	fmt.Fprintf(os.Stderr, "  %-22s NOT MEASURED: install Debian's %s\n", what, packages)
}
