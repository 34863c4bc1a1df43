package bench

import (
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// ProgramModel is one model of program_mlp and program_cnn: a PyTorch
// program of examples/program served by the adapter (gtrainprog_torch.py).
type ProgramModel struct {
	Name   string // "mlp" or "cnn": the peer script's argument
	Entry  string // the program in examples/program
	Hidden string // model.hidden of the job
}

// The compute issue's program models.
var (
	ProgramMLP = ProgramModel{Name: "mlp", Entry: "torch_mlp.py", Hidden: "[1024, 1024]"}
	ProgramCNN = ProgramModel{Name: "cnn", Entry: "torch_cnn.py", Hidden: "[]"}
)

// ProgramRecordsPerSecond trains each model as a program job on
// Fashion-MNIST with a real dev agent (1 trainer of cpu: 1, 2 pservers, a
// global batch of 256) and returns records/s: the global batch over the
// median step time of 3 windows of 40 steps after 20 of warm-up, inside the
// first pass, as trainer_mlp measures the built-in MLP.
func ProgramRecordsPerSecond(binDir, examplesDir string, models []ProgramModel) ([]float64, error) {
	a, work, err := newFashionAgent(binDir, "gtrain-bench-program")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(work)
	defer a.stop()
	ws := filepath.Join(work, "ws")
	if err := copyPrograms(examplesDir, ws); err != nil {
		return nil, err
	}
	var out []float64
	for _, m := range models {
		name := "program-" + m.Name
		if err := a.submit(programSpec(work, ws, name, m)); err != nil {
			return nil, err
		}
		ms, err := (&measurer{cli: a.cli, job: name}).medianStepMs(mlpWarmup, mlpMeasured, mlpWindows)
		a.stopJob(name)
		time.Sleep(time.Second) // let its processes go before the next job
		if err != nil {
			return nil, err
		}
		out = append(out, mlpGlobalBatch/(ms/1000))
		fmt.Fprintf(os.Stderr, "  program %s, 1 trainer of cpu 1: %.1f ms per step\n", m.Name, ms)
	}
	return out, nil
}

// copyPrograms copies the Python programs of examples/program into ws, a
// workspace under the agent's allowed path.
func copyPrograms(from, ws string) error {
	if err := os.MkdirAll(ws, 0o755); err != nil {
		return err
	}
	files, err := filepath.Glob(filepath.Join(from, "*.py"))
	if err != nil || len(files) == 0 {
		return fmt.Errorf("no programs in %s (run the bench from the repository root): %v", from, err)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err == nil {
			err = os.WriteFile(filepath.Join(ws, filepath.Base(f)), b, 0o644)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func programSpec(work, ws, name string, m ProgramModel) string {
	return fmt.Sprintf(`name: %s
mode: sync
trainers: 1
pservers: 2
passes: 5
batch_size: %d
global_batch: %d
seed: 1
model:
  kind: program
  entry: "%s %s"
  workspace: %s
  inputs: 784
  outputs: 10
  hidden: %s
optimizer: {kind: sgd, learning_rate: 0.01}
data: {train: %s/data/fashion-train-*, test: %s/data/fashion-test-*}
resources:
  trainer: {cpu: 1, memory: 1Gi}
  pserver: {cpu: 0.1, memory: 128Mi}
`, name, mlpGlobalBatch, mlpGlobalBatch, TorchPython, m.Entry, ws, m.Hidden, work, work)
}

// RunTorchProgramPeer runs scripts/torch_program_peer.py: plain
// single-process PyTorch training m's module on threads threads.
func RunTorchProgramPeer(scriptsDir string, m ProgramModel, threads int) (TorchMLP, error) {
	return runPeer(scriptsDir, "torch_program_peer.py", m.Name, fmt.Sprint(threads))
}
