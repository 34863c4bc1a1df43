package bench

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/gtrain/gtrain/api"
	"github.com/gtrain/gtrain/coord"
)

// fashionDir is where Debian's dataset-fashion-mnist puts the data.
const fashionDir = "/usr/share/datasets/fashion-mnist"

// convertFashion turns Fashion-MNIST's training set (60,000 records, 1 %
// held out as a small test part: evaluation at pass ends stays short) into
// record shards under work/data with the real gctl binary, as an operator
// would.
func convertFashion(binDir, work string) error {
	out, err := exec.Command(filepath.Join(binDir, "gctl"), "data", "convert", "--format", "idx",
		"--input", filepath.Join(fashionDir, "train-images-idx3-ubyte.gz"),
		"--labels", filepath.Join(fashionDir, "train-labels-idx1-ubyte.gz"),
		"--out", filepath.Join(work, "data", "fashion"), "--shards", "2", "--test-fraction", "0.01", "--normalize").CombinedOutput()
	if err != nil {
		return fmt.Errorf("gctl data convert: %w: %s", err, out)
	}
	return nil
}

// softmaxSpec is the step_time job: softmax 784→10 on Fashion-MNIST,
// 1 pserver, a global batch of 64 cut into micro-batches of batch records.
func softmaxSpec(work, name, trainers string, batch, passes int) string {
	return fmt.Sprintf(`name: %s
mode: sync
trainers: %s
pservers: 1
passes: %d
batch_size: %d
global_batch: 64
seed: 1
model: {kind: softmax, inputs: 784, outputs: 10}
optimizer: {kind: sgd, learning_rate: 0.01}
data: {train: %s/data/fashion-train-*, test: %s/data/fashion-test-*}
resources:
  trainer: {cpu: 0.1, memory: 64Mi}
  pserver: {cpu: 0.1, memory: 64Mi}
`, name, trainers, passes, batch, work, work)
}

// meta is the master's state record: saved at pass ends, checkpoints and
// membership changes, and in the background (every 250 ms) while steps commit.
type meta struct {
	Pass  int   `json:"pass"`
	Step  int64 `json:"step"`
	Epoch int64 `json:"epoch"`
	Done  bool  `json:"done"`
}

func (m *measurer) meta() (meta, error) {
	var v meta
	_, err := coord.GetJSON(context.Background(), m.cli, coord.MasterMetaKey(m.job), &v)
	return v, err
}

// waitMeta polls the master's meta record every poll until cond holds and
// returns it with the time it was read.
func (m *measurer) waitMeta(timeout, poll time.Duration, cond func(meta) bool) (meta, time.Time, error) {
	deadline := time.Now().Add(timeout)
	ended := everySecond(m.ended)
	for time.Now().Before(deadline) {
		if v, err := m.meta(); err == nil && cond(v) {
			return v, time.Now(), nil
		}
		if err := ended(); err != nil {
			return meta{}, time.Time{}, err
		}
		time.Sleep(poll)
	}
	v, _ := m.meta()
	return v, time.Time{}, fmt.Errorf("bench %s: condition not met after %s (meta %+v)", m.job, timeout, v)
}

// stopJob stops and purges a job so that the next one has the machine.
func (a *benchAgent) stopJob(name string) {
	_, _ = a.ctl.StopJob(context.Background(), &api.StopJobRequest{Name: name, Purge: true})
}

// newFashionAgent starts a dev agent with the converted Fashion-MNIST data,
// and extra agent flags.
func newFashionAgent(binDir, prefix string, extra ...string) (*benchAgent, string, error) {
	work, err := os.MkdirTemp("", prefix)
	if err != nil {
		return nil, "", err
	}
	if err := convertFashion(binDir, work); err != nil {
		os.RemoveAll(work)
		return nil, "", err
	}
	a, err := startBenchAgent(binDir, work, extra...)
	if err != nil {
		os.RemoveAll(work)
		return nil, "", err
	}
	return a, work, nil
}
