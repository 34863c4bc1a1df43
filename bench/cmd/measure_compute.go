package main

import (
	"fmt"
	"strconv"
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
	if needTorch.present() {
		peer, err := bestTorchMLP(peerRuns)
		if err != nil {
			return err
		}
		t.add(bench.Result{Name: "trainer_mlp", Value: one, Unit: "records/s", Ceiling: peer.RecordsPerS,
			Note: fmt.Sprintf("peer, not a ceiling: single-process PyTorch %s on %d thread (the best of %d runs), BLAS %s, glibc malloc keeping freed memory (bench.PeerEnv), same model and batch, random data; %s; %s; goal ratio >= 1.0", peer.Torch, peer.Threads, peerRuns, strings.Join(peer.BLAS, " "), sides, bench.KernelsAgainst(peer.BLAS))})
	} else {
		notMeasured("trainer_mlp (against PyTorch)", needTorch)
	}
	t.add(bench.Result{Name: "trainer_mlp_gemm", Value: one, Unit: "records/s", Ceiling: gemmCeiling,
		Note: fmt.Sprintf("ceiling: the best single-thread float32 GEMM rate of this build's kernels over the model's product shapes (%.1f GFLOP/s) / %d FLOPs per record; %s", flops/1e9, bench.MLPFlopsPerRecord, sides)})
	t.add(bench.Result{Name: "trainer_mlp_threads", Value: threads, Unit: "records/s", Ceiling: 2 * one,
		Note: fmt.Sprintf("cpu: 2 against twice cpu: 1 (%.0f records/s): speedup %.2fx (goal >= 1.7x, ratio >= 0.85); %s", one, threads/one, sides)})
	t.add(bench.Result{Name: "scaling_mlp", Value: two, Unit: "records/s", Ceiling: 2 * one,
		Note: fmt.Sprintf("2 trainers of cpu: 1 (micro-batches of 128) against twice 1 trainer: the ratio is the scaling efficiency; on this machine the pservers, master and agent share its cores; %s", sides)})
	return nil
}

// peerRuns is how many times trainer_mlp's peer runs, keeping its best (a
// peer at its best): on the 2-core VM of 2026-11-28 one run of it read
// 9,814 records/s and the next bench's 7,999, while gtrain's side moved by
// 6%. Only the peer is repeated: its best can only lower the ratio, and
// gtrain's side is three jobs (cpu 1, cpu 2, two trainers) a run.
// internal/refdoc/bench.go names the count in the reference.
const peerRuns = 3

// bestTorchMLP runs the single-thread PyTorch peer runs times and keeps the
// run of the most records/s.
func bestTorchMLP(runs int) (bench.TorchMLP, error) {
	var top bench.TorchMLP
	for i := range runs {
		r, err := bench.RunTorchMLP("scripts", 1)
		if err != nil {
			return bench.TorchMLP{}, err
		}
		if i == 0 || r.RecordsPerS > top.RecordsPerS { // the first whatever it read: its version and BLAS
			top = r
		}
	}
	return top, nil
}

// scalingCurves parses -scaling's counts and prints the curves.
func scalingCurves(bin, list string) error {
	var counts []int
	for _, f := range strings.Split(list, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 || 256%n != 0 {
			return fmt.Errorf("-scaling %q: %q is not a trainer count dividing the global batch of 256", list, f)
		}
		counts = append(counts, n)
	}
	return printScaling(bin, counts)
}

// printScaling runs the MLP job with each trainer count (cpu: 1 each, one
// global batch of 256) and PyTorch DDP over gloo with as many processes,
// and prints both curves (scripts/scaling.sh).
func printScaling(bin string, counts []int) error {
	runs := make([]bench.MLPRun, len(counts))
	for i, n := range counts {
		runs[i] = bench.MLPRun{Trainers: n, CPU: 1, Pservers: bench.ScalingPservers(n)}
	}
	rps, err := bench.MLPRecordsPerSecond(bin, runs)
	if err != nil {
		return err
	}
	torch := needTorch.present()
	fmt.Printf("MLP 784-1024-1024-10, global batch 256; gtrain: %s, trainers of cpu: 1, half as many pservers (at least 2)\n", model.Kernels())
	fmt.Printf("%-8s %9s %14s %10s %14s %10s\n", "WORKERS", "PSERVERS", "GTRAIN REC/S", "EFFICIENCY", "DDP REC/S", "EFFICIENCY")
	var ddpOne float64
	var peer bench.TorchMLP
	for i, n := range counts {
		ddp, ddpEff := "NOT MEASURED", "-"
		if torch {
			r, err := bench.RunDDPMLP("scripts", n)
			if err != nil {
				return err
			}
			if i == 0 {
				ddpOne, peer = r.RecordsPerS/float64(n), r
			}
			ddp, ddpEff = fmt.Sprintf("%.0f", r.RecordsPerS), fmt.Sprintf("%.2f", r.RecordsPerS/(ddpOne*float64(n)))
		}
		fmt.Printf("%-8d %9d %14.0f %10.2f %14s %10s\n", n, runs[i].Pservers, rps[i], rps[i]/(rps[0]/float64(counts[0])*float64(n)), ddp, ddpEff)
	}
	if !torch {
		notMeasured("DDP curve", needTorch)
		return nil
	}
	fmt.Printf("DDP: PyTorch %s (%s), processes of 1 thread, on %s\n", peer.Torch, bench.TorchPython, strings.Join(peer.BLAS, " "))
	return nil
}
