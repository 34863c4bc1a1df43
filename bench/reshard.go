package bench

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/gtrain/gtrain/coord"
)

// ReshardPause is reshard_pause: the milliseconds of training paused while
// a sync job's pservers are re-sharded from 2 to 3, for a 64 MiB model
// (MLP 784-4096-3300-10, 16,768,470 parameters, SGD), as the master
// measures and `gctl job status` shows it: from when it stops handing out
// steps (its global checkpoint taken) to the first step committed under the
// new layout. Seconds is the whole re-shard as an operator sees it, from
// `gctl job scale` (the checkpoint it waits for included).
type ReshardPause struct {
	PauseMs float64
	Seconds float64
	Params  int64
	// StepMs is the job's step time before the re-shard: the pause includes
	// one step (the first under the new layout).
	StepMs float64
}

// reshardParams is the model's parameter count: 64 MiB of float32.
const reshardParams = 784*4096 + 4096 + 4096*3300 + 3300 + 3300*10 + 10

// MeasureReshardPause runs the job on Fashion-MNIST, waits for a few
// steps, scales it to 3 pservers and reads the pause from the layout record.
func MeasureReshardPause(binDir string) (*ReshardPause, error) {
	a, work, err := newFashionAgent(binDir, "gtrain-bench-reshard")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(work)
	defer a.stop()
	const name = "reshard-pause"
	spec := fmt.Sprintf(`name: %s
mode: sync
trainers: 1
pservers: {count: 2, min: 2, max: 3}
passes: 1000
batch_size: 16
seed: 1
model: {kind: mlp, inputs: 784, outputs: 10, hidden: [4096, 3300]}
optimizer: {kind: sgd, learning_rate: 0.001}
data: {train: %s/data/fashion-train-*, test: %s/data/fashion-test-*}
checkpoint: {every: "1000", keep: 2}
resources:
  trainer: {cpu: 0.1, memory: 256Mi}
  pserver: {cpu: 0.1, memory: 128Mi}
`, name, work, work)
	if err := a.submit(spec); err != nil {
		return nil, err
	}
	defer a.stopJob(name)
	m := &measurer{cli: a.cli, job: name}
	first, t0, err := m.waitMeta(180*time.Second, 5*time.Millisecond, func(v meta) bool { return v.Step >= 3 })
	if err != nil {
		return nil, err
	}
	last, t1, err := m.waitMeta(180*time.Second, 5*time.Millisecond, func(v meta) bool { return v.Step >= first.Step+5 })
	if err != nil {
		return nil, err
	}
	stepMs := float64(t1.Sub(t0).Milliseconds()) / float64(last.Step-first.Step)
	start := time.Now()
	out, err := exec.Command(filepath.Join(binDir, "gctl"), "--addr", a.apiAddr, "job", "scale", name, "--pservers", "3").CombinedOutput()
	if err != nil {
		return nil, fmt.Errorf("gctl job scale: %w: %s", err, out)
	}
	for time.Since(start) < 180*time.Second {
		l, err := coord.GetLayout(context.Background(), a.cli, name)
		if err == nil && l.Generation > 0 && l.PauseMs > 0 {
			return &ReshardPause{PauseMs: float64(l.PauseMs), Seconds: time.Since(start).Seconds(), Params: reshardParams, StepMs: stepMs}, nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	return nil, fmt.Errorf("reshard_pause: no re-shard finished within 180 s of the scale")
}
