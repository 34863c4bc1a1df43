package e2erig

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/gtrain/gtrain/internal/testing/specyaml"
	"github.com/gtrain/gtrain/jobspec"
)

// HousingJob is fit-a-line over the housing shards in dataDir (relative
// paths resolve against the spec file): a linear model by SGD, seed 1,
// sync, no counts yet.
func HousingJob(name, dataDir string, lr float64) jobspec.Spec {
	return jobspec.Spec{Name: name, Mode: jobspec.ModeSync, Seed: 1,
		Model:     jobspec.ModelSpec{Kind: "linear", Inputs: 13, Outputs: 1},
		Optimizer: jobspec.OptimizerSpec{Kind: jobspec.OptimizerSGD, LearningRate: lr},
		Data:      jobspec.DataSpec{Train: dataDir + "/housing-train-*", Test: dataDir + "/housing-test-*"}}
}

// ChaosJob is the sync job the fault tests harm: 3 trainers and 2
// pservers, batches of 4 (about 34 steps a pass), checkpoints every 25
// steps in the job's directory.
func ChaosJob(name string, passes int) jobspec.Spec {
	s := HousingJob(name, "data", 0.003)
	s.Trainers, s.Pservers, s.Passes, s.BatchSize = 3, 2, passes, 4
	s.Checkpoint = jobspec.CheckpointSpec{Every: "25", Keep: 3}
	return s
}

// AsyncJob is fit-a-line in async mode: 2 trainers, 1 pserver.
func AsyncJob(name string, passes int) jobspec.Spec {
	s := HousingJob(name, "data", 0.003)
	s.Mode, s.Trainers, s.Pservers, s.Passes, s.BatchSize = jobspec.ModeAsync, 2, 1, passes, 20
	return s
}

// WriteSpec writes the job's spec document into dir and returns its path.
func WriteSpec(t *testing.T, dir string, s jobspec.Spec) string {
	t.Helper()
	return WriteSpecText(t, dir, specyaml.Marshal(s))
}

// WriteSpecText writes a spec document as it is: for the tests of what
// a jobspec value cannot hold (an unknown field, a malformed document).
func WriteSpecText(t *testing.T, dir, body string) string {
	t.Helper()
	p := filepath.Join(dir, "job.yaml")
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// hc.ClusterJob is the sync job of the multi-host tests: the chaos job with
// clusterPasses passes, its data and checkpoints on the shared directory.
func (hc *HostCluster) ClusterJob(name string) jobspec.Spec {
	s := ChaosJob(name, ClusterPasses)
	s.Data = jobspec.DataSpec{Train: hc.Shared + "/data/housing-train-*", Test: hc.Shared + "/data/housing-test-*"}
	s.Checkpoint.Dir = hc.Shared + "/checkpoints/" + name
	return s
}
