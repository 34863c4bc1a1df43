package bench

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/gtrain/gtrain/coord"
	"github.com/gtrain/gtrain/coord/schema"
)

// ScaleUp is scale_up: the seconds from running `gctl job scale NAME
// --trainers 3` on a sync job training with 2 trainers (the softmax job of
// step_time, micro-batches of 16 records so that a third trainer has
// micro-batches to take) to the first committed step that includes a
// micro-batch of the new trainer.
//
// The signal is the job's public progress record (what `gctl job status`
// shows): its step_ms holds a trainer's last micro-batch time once the
// master took a micro-batch report from it, and the master commits the
// step together with that report. The record is rewritten at most every
// 250 ms, so the figure is an upper bound up to 250 ms late; Lower is the
// time of the last record without the new trainer (the lower bound).
type ScaleUp struct {
	Seconds, Lower float64
}

// MeasureScaleUp runs the job, waits for the second pass (warm), scales
// it and times the new trainer's first step.
func MeasureScaleUp(binDir string) (*ScaleUp, error) {
	a, work, err := newFashionAgent(binDir, "gtrain-bench-scale")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(work)
	defer a.stop()
	const name = "scale-up"
	if err := a.submit(softmaxSpec(work, name, "{count: 2, min: 1, max: 3}", 16, 1000)); err != nil {
		return nil, err
	}
	defer a.stopJob(name)
	m := &measurer{cli: a.cli, job: name}
	if _, _, err := m.waitMeta(120*time.Second, 5*time.Millisecond, func(v meta) bool { return v.Pass >= 1 }); err != nil {
		return nil, err
	}
	start := time.Now()
	out, err := exec.Command(filepath.Join(binDir, "gctl"), "--addr", a.apiAddr, "job", "scale", name, "--trainers", "3").CombinedOutput()
	if err != nil {
		return nil, fmt.Errorf("gctl job scale: %w: %s", err, out)
	}
	return m.waitStepMs(start, 2, 60*time.Second)
}

// waitStepMs polls the progress record until trainer id's step_ms is in it.
func (m *measurer) waitStepMs(start time.Time, id int, timeout time.Duration) (*ScaleUp, error) {
	res := &ScaleUp{}
	for time.Since(start) < timeout {
		var p schema.ProgressRecord
		if _, err := coord.GetJSON(context.Background(), m.cli, coord.ProgressKey(m.job), &p); err == nil {
			if _, ok := p.StepMs[id]; ok {
				res.Seconds = time.Since(start).Seconds()
				return res, nil
			}
			res.Lower = max(res.Lower, p.Updated.Sub(start).Seconds())
		}
		time.Sleep(5 * time.Millisecond)
	}
	return nil, fmt.Errorf("scale_up: trainer %d took no micro-batch within %s of the scale", id, timeout)
}
