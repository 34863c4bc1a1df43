package bench

import (
	"fmt"
	"os"
	"slices"
	"time"
)

// StepTimes measures step_time: for each trainer count n, the ms per sync
// step of a real job (real `gtraind agent --dev`, real master, pserver and
// trainer processes) training softmax 784→10 on Fashion-MNIST with a global
// batch of 64 (micro-batches of 64/n records) and 1 pserver. The first
// warmup steps are skipped (processes start, connections open, caches
// fill); the figure is the median of windows windows of measured steps each
// (wall time over step count),
// read from the pserver's step (Info) polled every stepPoll: the master saves
// its step commits in the background, a few times a second. A pass has
// firstPassSteps steps; warmup + windows × measured stays inside the first pass:
// steady-state steps, no pass-end evaluation.
func StepTimes(binDir string, trainers []int, warmup, measured int64, windows int) (map[int]float64, error) {
	a, work, err := newFashionAgent(binDir, "gtrain-bench-step")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(work)
	defer a.stop()
	out := map[int]float64{}
	for _, n := range trainers {
		ms, err := stepTime(a, work, n, warmup, measured, windows)
		if err != nil {
			return nil, err
		}
		out[n] = ms
	}
	return out, nil
}

func stepTime(a *benchAgent, work string, n int, warmup, measured int64, windows int) (float64, error) {
	if 64%n != 0 {
		return 0, fmt.Errorf("step_time: %d trainers do not divide the global batch of 64", n)
	}
	if warmup+int64(windows)*measured >= firstPassSteps {
		return 0, fmt.Errorf("step_time: %d warm-up and %d × %d measured steps leave the first pass (%d steps)", warmup, windows, measured, firstPassSteps)
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
	return m.medianStepMs(warmup, measured, windows)
}

// medianStepMs is the median over windows windows of measured steps each,
// after warmup steps, of the ms per step of the running job, read from
// pserver 0's step.
func (m *measurer) medianStepMs(warmup, measured int64, windows int) (float64, error) {
	p, err := m.newStepPoller(0, 120*time.Second)
	if err != nil {
		return 0, err
	}
	defer p.close()
	from, err := p.waitStep(120*time.Second, stepPoll, warmup)
	if err != nil {
		return 0, err
	}
	var each []float64
	for range windows {
		to, err := p.waitStep(120*time.Second, stepPoll, from.step+measured)
		if err != nil {
			return 0, err
		}
		if to.epoch != from.epoch {
			return 0, fmt.Errorf("%s: the job rolled back while measured (epoch %d -> %d)", m.job, from.epoch, to.epoch)
		}
		each = append(each, float64(to.at.Sub(from.at).Microseconds())/1000/float64(to.step-from.step))
		from = to
	}
	slices.Sort(each)
	return each[len(each)/2], nil
}

// firstPassSteps is the steps of a pass of the step_time job (Fashion-MNIST
// converted with 1% held out for test, a global batch of 64).
const firstPassSteps = 928

// stepPoll paces the reads of the pserver's step. A window's time and step
// count are both taken at poll instants, so the pace bounds nothing but how
// soon a window ends. The probe is not free: polled every 5 ms (an Info
// call waking the pserver 200 times a second) the figure read 1.5-2.0 ms
// where polling every 50 ms read 1.4 ms, alternately, on the same build.
const stepPoll = 50 * time.Millisecond

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
