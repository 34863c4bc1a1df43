package bench

import (
	"fmt"
	"os"
	"time"
)

// StepTimes measures step_time: for each trainer count n, the ms per sync
// step of a real job (real `gtraind agent --dev`, real master, pserver and
// trainer processes) training softmax 784→10 on Fashion-MNIST with a global
// batch of 64 (micro-batches of 64/n records) and 1 pserver. The first
// warmup steps are skipped (processes start, connections open, caches
// fill); the figure is the wall time of the next measured steps divided by
// their count, read from the pserver's step (Info) polled every 5 ms: the
// master saves its step commits in the background, a few times a second. A pass has 928 steps, so the window
// lies inside the first pass: steady-state steps, no pass-end evaluation.
func StepTimes(binDir string, trainers []int, warmup, measured int64) (map[int]float64, error) {
	a, work, err := newFashionAgent(binDir, "gtrain-bench-step")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(work)
	defer a.stop()
	out := map[int]float64{}
	for _, n := range trainers {
		ms, err := stepTime(a, work, n, warmup, measured)
		if err != nil {
			return nil, err
		}
		out[n] = ms
	}
	return out, nil
}

func stepTime(a *benchAgent, work string, n int, warmup, measured int64) (float64, error) {
	if 64%n != 0 {
		return 0, fmt.Errorf("step_time: %d trainers do not divide the global batch of 64", n)
	}
	name := fmt.Sprintf("step-%d", n)
	if err := a.submit(softmaxSpec(work, name, fmt.Sprint(n), 64/n, 1000)); err != nil {
		return 0, err
	}
	defer func() {
		a.stopJob(name)
		time.Sleep(time.Second) // let its processes go before the next job
	}()
	m := &measurer{cli: a.cli, job: name}
	p, err := m.newStepPoller(120 * time.Second)
	if err != nil {
		return 0, err
	}
	defer p.close()
	from, err := p.waitStep(120*time.Second, 5*time.Millisecond, warmup)
	if err != nil {
		return 0, err
	}
	to, err := p.waitStep(120*time.Second, 5*time.Millisecond, from.step+measured)
	if err != nil {
		return 0, err
	}
	if to.epoch != from.epoch {
		return 0, fmt.Errorf("step_time %d trainers: the job rolled back while measured (epoch %d -> %d)", n, from.epoch, to.epoch)
	}
	return float64(to.at.Sub(from.at).Microseconds()) / 1000 / float64(to.step-from.step), nil
}

// RoundTripMs is step_time's ceiling: the ms of one pull plus one push of a
// whole floats-parameter model through one real pserver shard over real
// gRPC on loopback, by one trainer (a sync step of one micro-batch), the
// best mean of rounds runs of steps steps.
func RoundTripMs(floats, steps, rounds int) (float64, error) {
	r, err := newRig(floats, 1, 1, "")
	if err != nil {
		return 0, err
	}
	defer r.close()
	bestMs := 0.0
	for range rounds {
		start := time.Now()
		for range steps {
			if err := r.step(false); err != nil {
				return 0, err
			}
		}
		ms := float64(time.Since(start).Microseconds()) / 1000 / float64(steps)
		if bestMs == 0 || ms < bestMs {
			bestMs = ms
		}
	}
	return bestMs, nil
}
