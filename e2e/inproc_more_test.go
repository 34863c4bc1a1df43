package e2e

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gtrain/gtrain/api"
	"github.com/gtrain/gtrain/internal/testing/e2erig"

	"github.com/gtrain/gtrain/dataset"
	"github.com/gtrain/gtrain/jobspec"
	"github.com/gtrain/gtrain/model"
)

func manifestOf(t *testing.T, dataDir, job string) model.Manifest {
	t.Helper()
	m, _, err := model.ReadModel(filepath.Join(dataDir, "jobs", job, "model", "latest"))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestInProcessSyncRunsAreBitIdentical(t *testing.T) {
	cli := startEtcd(t)
	dir := t.TempDir()
	e2erig.Housing(t, dir)
	var sums [2][]string
	for run := 0; run < 2; run++ {
		spec := fitALine(t, fmt.Sprintf("det-%d", run), jobspec.ModeSync, dir, 5)
		submit(t, cli, spec)
		runInProcess(t, cli, dir, spec.Name, 2, 2)
		for _, p := range manifestOf(t, dir, spec.Name).Params {
			sums[run] = append(sums[run], p.Name+"="+p.SHA256)
		}
	}
	if strings.Join(sums[0], ",") != strings.Join(sums[1], ",") {
		t.Fatalf("two sync runs with the same seed differ:\n%v\n%v", sums[0], sums[1])
	}
}

func TestInProcessAsyncFitALineConverges(t *testing.T) {
	cli := startEtcd(t)
	dir := t.TempDir()
	res := e2erig.Housing(t, dir)
	opt := leastSquaresTestMSE(t, res)
	spec := fitALine(t, "fit-async", jobspec.ModeAsync, dir, 30)
	submit(t, cli, spec)
	runInProcess(t, cli, dir, spec.Name, 2, 2)
	p := progress(t, cli, spec.Name)
	t.Logf("async test MSE %.4f, optimum %.4f", *p.Metrics.TestLoss, opt)
	if *p.Metrics.TestLoss > 1.10*opt {
		t.Errorf("async test MSE %.4f not within 10%% of the optimum %.4f", *p.Metrics.TestLoss, opt)
	}
	for i, n := range p.SamplesApplied {
		if n < int64(res.TrainRecords) {
			t.Errorf("pass %d: async samples_applied %d < train set %d", i, n, res.TrainRecords)
		}
	}
}

// blobs writes a separable 3-class data set: well separated Gaussian blobs.
func blobs(t *testing.T, dir string) *dataset.ConvertResult {
	t.Helper()
	r := rand.New(rand.NewPCG(7, 7))
	centers := [][]float64{{4, 0, 0, 0}, {0, 4, 0, 0}, {0, 0, 4, 4}}
	var b strings.Builder
	for i := 0; i < 600; i++ {
		c := i % 3
		for _, m := range centers[c] {
			fmt.Fprintf(&b, "%.4f,", m+r.NormFloat64()*0.7)
		}
		fmt.Fprintf(&b, "%d\n", c)
	}
	in := filepath.Join(dir, "blobs.csv")
	if err := os.WriteFile(in, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := dataset.Convert(dataset.ConvertOptions{Format: "csv", Input: in, OutPrefix: filepath.Join(dir, "blobs"),
		Shards: 2, TestFraction: 0.2, Seed: 1, Classes: 3})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func TestInProcessSoftmaxSeparates(t *testing.T) {
	cli := startEtcd(t)
	dir := t.TempDir()
	blobs(t, dir)
	spec := parsed(t, jobspec.Spec{Name: "blobs", Mode: jobspec.ModeSync, Trainers: 2, Pservers: 2, Passes: 5, BatchSize: 16,
		Model:     jobspec.ModelSpec{Kind: "softmax", Inputs: 4, Outputs: 3},
		Optimizer: jobspec.OptimizerSpec{Kind: jobspec.OptimizerAdam, LearningRate: 0.05},
		Data:      jobspec.DataSpec{Train: dir + "/blobs-train-*", Test: dir + "/blobs-test-*"}})
	submit(t, cli, spec)
	runInProcess(t, cli, dir, spec.Name, 2, 2)
	p := progress(t, cli, spec.Name)
	if p.Metrics.TestAccuracy == nil {
		t.Fatal("no test accuracy reported for softmax")
	}
	t.Logf("softmax test accuracy %.3f, loss %.4f", *p.Metrics.TestAccuracy, *p.Metrics.TestLoss)
	if *p.Metrics.TestAccuracy < 0.95 {
		t.Errorf("softmax accuracy %.3f < 0.95", *p.Metrics.TestAccuracy)
	}
}

func TestInProcessDamagedShardFailsTheJobNamingFileAndOffset(t *testing.T) {
	cli := startEtcd(t)
	dir := t.TempDir()
	res := e2erig.Housing(t, dir)
	// Flip a byte inside the first chunk's payload of the first training shard.
	f := res.TrainFiles[0]
	b, err := os.ReadFile(f)
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)/3] ^= 0xff
	if err := os.WriteFile(f, b, 0o644); err != nil {
		t.Fatal(err)
	}
	spec := fitALine(t, "damaged", jobspec.ModeSync, dir, 2)
	submit(t, cli, spec)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go runRolesUntil(ctx, cli, dir, spec.Name, 2, 2)
	st := waitState(t, cli, spec.Name, 30*time.Second)
	if st.State != api.StateFailed || !strings.Contains(st.Reason, f) || !strings.Contains(st.Reason, "offset") {
		t.Fatalf("state %s reason %q: want FAILED naming %s and an offset", st.State, st.Reason, f)
	}
}
