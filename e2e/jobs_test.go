package e2e

import (
	"path/filepath"
	"testing"

	"github.com/gtrain/gtrain/internal/testing/e2erig"
	"github.com/gtrain/gtrain/internal/testing/specyaml"
	"github.com/gtrain/gtrain/jobspec"
)

// fitALineJob is the fit-a-line job of the check: 2 trainers, 2
// pservers, batches of 20.
func fitALineJob(name string, mode jobspec.Mode, passes int, dataDir string) jobspec.Spec {
	s := e2erig.HousingJob(name, dataDir, 0.01)
	s.Mode, s.Trainers, s.Pservers, s.Passes, s.BatchSize = mode, 2, 2, passes, 20
	return s
}

// elasticJob is fit-a-line in sync mode with a global batch of 4
// micro-batches of 10 records, whatever the trainer count, so that the
// model does not depend on it; checkpoints every 50 steps.
func elasticJob(name string, trainers, pservers, passes int) jobspec.Spec {
	s := e2erig.HousingJob(name, "data", 0.01)
	s.Trainers, s.Pservers, s.Passes, s.BatchSize, s.GlobalBatch = trainers, pservers, passes, 10, 40
	s.Checkpoint = jobspec.CheckpointSpec{Every: "50", Keep: 2}
	return s
}

// programJob is a job of the reference Python MLP program over the
// Fashion-MNIST shards in data/, its workspace in ws/.
func programJob(name, extraArgs string) jobspec.Spec {
	return jobspec.Spec{Name: name, Mode: jobspec.ModeSync, Trainers: 2, Pservers: 2, Passes: 3, BatchSize: 25, Seed: 1,
		Model: jobspec.ModelSpec{Kind: jobspec.KindProgram, Entry: "/usr/bin/python3 mlp.py" + extraArgs, Workspace: "ws",
			Inputs: 784, Outputs: 10, Hidden: []int{32}, Timeout: "30s"},
		Optimizer:  jobspec.OptimizerSpec{Kind: jobspec.OptimizerSGD, LearningRate: 0.05},
		Data:       jobspec.DataSpec{Train: "data/fashion-train-*", Test: "data/fashion-test-*"},
		Checkpoint: jobspec.CheckpointSpec{Every: "20", Keep: 3},
		Resources:  jobspec.ResourcesSpec{Trainer: jobspec.Resource{Memory: "1Gi"}}} // the program's limit, required by a sandboxing agent
}

// parsed is s as the agent reads it (defaults applied), for the tests
// that run the roles in process.
func parsed(t testing.TB, s jobspec.Spec) jobspec.Spec {
	t.Helper()
	p, err := jobspec.Parse([]byte(specyaml.Marshal(s)))
	if err != nil {
		t.Fatalf("job %s: %v", s.Name, err)
	}
	return *p
}

// minJob is a sync job of 4 trainers, at least 3, each asking for a whole
// CPU, checkpoints in dir.
func minJob(name, dir string) jobspec.Spec {
	s := elasticJob(name, 4, 1, 20)
	s.TrainersMin, s.TrainersMax = 3, 4
	s.Checkpoint.Dir = filepath.Join(dir, "ckpt-"+name)
	s.Resources.Trainer = jobspec.Resource{CPU: 1, Memory: "64Mi"}
	return s
}

// elasticCountJob is fit-a-line in sync mode with a global batch of 3
// micro-batches of 20, over trainers trainers.
func elasticCountJob(name string, trainers int) jobspec.Spec {
	s := elasticJob(name, trainers, 2, 3)
	s.BatchSize, s.GlobalBatch = 20, 60
	s.Checkpoint.Every = "10"
	return s
}

// threadsJob is an mlp on the housing data whose trainers ask for cpu CPUs.
func threadsJob(name string, cpu int) jobspec.Spec {
	s := e2erig.HousingJob(name, "data", 0.001)
	s.Trainers, s.Pservers, s.Passes, s.BatchSize, s.GlobalBatch = 2, 1, 2, 20, 40
	s.Model = jobspec.ModelSpec{Kind: "mlp", Inputs: 13, Outputs: 1, Hidden: []int{300, 260}}
	s.Resources = jobspec.ResourcesSpec{Trainer: jobspec.Resource{CPU: float64(cpu), Memory: "128Mi"},
		Pserver: jobspec.Resource{CPU: 0.1, Memory: "64Mi"}}
	return s
}

// torchCNNJob is a job of examples/program/torch_cnn.py.
func torchCNNJob(name string) jobspec.Spec {
	s := programJob(name, "")
	// 4 passes (~100 steps of ~20 ms): TestTorchCNN kills a program once
	// the status shows step 3, which must be well before the job's last
	// step (with 2 passes and a kill past step 15, a quiet machine ended the
	// job before the kill landed, and the program was no longer needed).
	s.Pservers, s.Passes, s.BatchSize = 1, 4, 32
	s.Model.Entry, s.Model.Hidden, s.Model.Timeout = "/usr/bin/python3 torch_cnn.py", nil, "60s"
	momentum := 0.9
	s.Optimizer = jobspec.OptimizerSpec{Kind: jobspec.OptimizerMomentum, LearningRate: 0.02, Momentum: &momentum}
	s.Restarts = jobspec.RestartsSpec{Limit: 3, Window: "10m"}
	s.Resources.Trainer.CPU = 0.5
	return s
}

// clusterJob is the chaos job with its checkpoints in dir, so that its
// roles can move between nodes.
func clusterJob(name, dir string) jobspec.Spec {
	s := e2erig.ChaosJob(name, chaosPasses)
	s.Checkpoint.Dir = filepath.Join(dir, "ckpt-"+name)
	return s
}

// hungJob is the chaos job whose roles count as hung after 5 s without
// progress, and with no straggler deadline to get there first.
func hungJob(name string) jobspec.Spec {
	s := e2erig.ChaosJob(name, hungPasses)
	s.Restarts.HungAfter = "5s"
	s.Stragglers = jobspec.StragglersSpec{Factor: 100, MinWait: "1h"}
	return s
}
