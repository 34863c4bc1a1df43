package main

import (
	"fmt"
	"time"

	"github.com/gtrain/gtrain/bench"
)

// softmaxParams is the step_time model's size: softmax 784→10.
const softmaxParams = 784*10 + 10

// measureStepTime is step_time (2 trainers) and step_time_1/_4/_8, each
// against the real pserver's push+pull round trip of the same model.
func measureStepTime(t *table, bin string) error {
	ceiling, err := bench.RoundTripMs(softmaxParams, 2000, 5)
	if err != nil {
		return err
	}
	counts := []int{2, 1, 4, 8}
	ms, err := bench.StepTimes(bin, counts, 200, 200, 3)
	if err != nil {
		return err
	}
	for _, n := range counts {
		name := fmt.Sprintf("step_time_%d", n)
		if n == 2 {
			name = "step_time"
		}
		t.add(bench.Result{Name: name, Value: ms[n], Unit: "ms", Ceiling: ceiling,
			Note: fmt.Sprintf("lower is better: ratio = ms per sync step / one push+pull round trip of the model through the real pserver (%.3f ms); softmax 784->10 (7,850 params), Fashion-MNIST, global batch 64 = %d trainers x %d, 1 pserver; the median of 3 windows of 200 steps after 200 of warm-up, inside pass 0; goal 1.2 ms", ceiling, n, 64/n)})
	}
	return nil
}

func measureScaleUp(t *table, bin string) error {
	s, err := bench.MeasureScaleUp(bin)
	if err != nil {
		return err
	}
	t.add(bench.Result{Name: "scale_up", Value: s.Seconds, Unit: "s",
		Note: fmt.Sprintf("gctl job scale --trainers 3 (from 2; softmax Fashion-MNIST, global batch 64 = 4 x 16) to the first progress record (status) with the new trainer's step_ms, i.e. a committed step with its micro-batch; the record is written at most every 250 ms, the last one without it was at %.3f s; absolute (no ceiling)", s.Lower)})
	return nil
}

func measurePserverMemory(t *table, bin string) error {
	m, err := bench.MeasurePserverMemory(bin, 20*time.Second)
	if err != nil {
		return err
	}
	const mib = 1 << 20
	goal := (1.5*float64(m.StateBytes) + 64*mib) / float64(m.StateBytes)
	r := float64(m.PeakBytes) / float64(m.StateBytes)
	t.add(bench.Result{Name: "pserver_memory", Value: r, Unit: "x state", Ratio: r,
		Note: fmt.Sprintf("lower is better: peak RSS (VmHWM) %.1f MiB / parameters + Adam's 2 moments %.1f MiB (MLP 784-2048-2048-10, 5,824,522 params, 1 pserver, 1 trainer, checkpoint every 5 steps, %d steps); goal <= 1.5x + 64 MiB = %.1f MiB (%.2fx)",
			float64(m.PeakBytes)/mib, float64(m.StateBytes)/mib, m.Steps, goal*float64(m.StateBytes)/mib, goal)})
	t.add(bench.Result{Name: "pserver_memory_mib", Value: float64(m.PeakBytes) / mib, Unit: "MiB",
		Note: fmt.Sprintf("the peak RSS of pserver_memory; goal <= %.1f MiB", goal*float64(m.StateBytes)/mib)})
	return nil
}

func measureReshardPause(t *table, bin string) error {
	r, err := bench.MeasureReshardPause(bin)
	if err != nil {
		return err
	}
	t.add(bench.Result{Name: "reshard_pause", Value: r.PauseMs, Unit: "ms",
		Note: fmt.Sprintf("training paused re-sharding a 64 MiB model (MLP 784-4096-3300-10, %d params, SGD, 1 trainer) from 2 to 3 pservers: from the master's stop (global checkpoint taken) to the first step under the new layout, as status shows it, so one step (%.0f ms before the re-shard) included; the whole re-shard from gctl job scale took %.1f s (the checkpoint it waits for included); absolute (no ceiling)", r.Params, r.StepMs, r.Seconds)})
	return nil
}
