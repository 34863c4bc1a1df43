package bench

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/gtrain/gtrain/coord"
	"github.com/gtrain/gtrain/coord/schema"
)

// mlpParams is the parameter count of the MLP 784-2048-2048-10 (weights
// and biases).
const mlpParams = 784*2048 + 2048 + 2048*2048 + 2048 + 2048*10 + 10

// PserverMemory is pserver_memory: the peak resident memory (VmHWM) of the
// real pserver process of a sync job training the MLP 784-2048-2048-10
// (5.8 M parameters) on Fashion-MNIST with Adam, 1 pserver, 1 trainer,
// a checkpoint every 5 steps, after run of training; and the bytes of its
// parameters plus Adam's two moments (3 float32 per parameter).
type PserverMemory struct {
	PeakBytes, StateBytes int64
	Steps                 int64
}

// MeasurePserverMemory runs the job for run after its first step and reads
// the pserver's VmHWM from /proc.
func MeasurePserverMemory(binDir string, run time.Duration) (*PserverMemory, error) {
	a, work, err := newFashionAgent(binDir, "gtrain-bench-mem")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(work)
	defer a.stop()
	const name = "pserver-memory"
	spec := fmt.Sprintf(`name: %s
mode: sync
trainers: 1
pservers: 1
passes: 1000
batch_size: 32
seed: 1
model: {kind: mlp, inputs: 784, outputs: 10, hidden: [2048, 2048]}
optimizer: {kind: adam, learning_rate: 0.0005}
data: {train: %s/data/fashion-train-*, test: %s/data/fashion-test-*}
checkpoint: {every: "5", keep: 2}
resources:
  trainer: {cpu: 0.1, memory: 64Mi}
  pserver: {cpu: 0.1, memory: 256Mi}
`, name, work, work)
	if err := a.submit(spec); err != nil {
		return nil, err
	}
	defer a.stopJob(name)
	m := &measurer{cli: a.cli, job: name}
	first, _, err := m.waitMeta(180*time.Second, 50*time.Millisecond, func(v meta) bool { return v.Step >= 1 })
	if err != nil {
		return nil, err
	}
	time.Sleep(run)
	var w schema.WorkerRecord
	if _, err := coord.GetJSON(context.Background(), a.cli, coord.WorkerKey(name, "pserver-0"), &w); err != nil {
		return nil, err
	}
	peak, err := vmHWM(w.PID)
	if err != nil {
		return nil, err
	}
	last, err := m.meta()
	if err != nil {
		return nil, err
	}
	if last.Epoch != first.Epoch {
		return nil, fmt.Errorf("pserver_memory: the job rolled back (epoch %d -> %d): the pserver may have restarted", first.Epoch, last.Epoch)
	}
	return &PserverMemory{PeakBytes: peak, StateBytes: 3 * 4 * mlpParams, Steps: last.Step}, nil
}

// vmHWM reads a process's peak resident set size from /proc/PID/status.
func vmHWM(pid int) (int64, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			if err != nil {
				return 0, fmt.Errorf("VmHWM of %d: %w", pid, err)
			}
			return kb << 10, nil
		}
	}
	return 0, fmt.Errorf("no VmHWM in /proc/%d/status", pid)
}
