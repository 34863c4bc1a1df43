package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gtrain/gtrain/api"
	"github.com/gtrain/gtrain/dataset"
	"github.com/gtrain/gtrain/internal/testing/e2erig"
	"github.com/gtrain/gtrain/internal/testing/specyaml"
	"github.com/gtrain/gtrain/jobspec"
)

// TestProcessFitALine is the vertical slice as an operator runs it: a real
// agent with embedded etcd, gctl for everything, role processes as children.
func TestProcessFitALine(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real processes")
	}
	work := t.TempDir()
	a := e2erig.StartAgent(t, filepath.Join(work, "agent"))
	opt := convertHousingWithGctl(t, a, work)

	spec := e2erig.WriteSpec(t, work, fitALineJob("fit-a-line", jobspec.ModeSync, 30, "data"))
	out, errs, code := a.Gctl(t, "job", "start", "-f", spec)
	if code != 0 {
		t.Fatalf("job start: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errs)
	}
	if !strings.Contains(out+errs, "SUCCEEDED") {
		t.Errorf("job start did not report the end:\n%s%s", out, errs)
	}
	assertFitALineStatus(t, a, opt)
	assertFitALineListings(t, a)

	// The name is taken until purged; after a purge it can be reused.
	_, errs, code = a.Gctl(t, "job", "start", "-f", spec, "--detach")
	if code != 2 || !strings.Contains(errs, "already exists") {
		t.Errorf("duplicate job: exit %d: %s", code, errs)
	}
	if _, errs, code = a.Gctl(t, "job", "stop", "fit-a-line", "--purge", "--yes"); code != 0 {
		t.Fatalf("job stop --purge: exit %d: %s", code, errs)
	}
	if _, _, code = a.Gctl(t, "job", "status", "fit-a-line"); code != 2 {
		t.Errorf("status of a purged job: exit %d, want 2", code)
	}
}

// convertHousingWithGctl converts the housing data under work/data with
// `gctl data convert` and returns the least-squares test MSE of the split.
func convertHousingWithGctl(t *testing.T, a *e2erig.Agent, work string) float64 {
	t.Helper()
	out, errs, code := a.Gctl(t, "data", "convert", "--format", "whitespace",
		"--input", filepath.Join(e2erig.RepoRoot(), "examples/data/uci_housing/housing.data"),
		"--out", filepath.Join(work, "data", "housing"), "--shards", "4", "--test-fraction", "0.2", "--seed", "1", "--normalize")
	if code != 0 {
		t.Fatalf("data convert: exit %d: %s", code, errs)
	}
	if !strings.Contains(out, "housing-train-00000-of-00004") {
		t.Errorf("data convert does not say what it wrote:\n%s", out)
	}
	train, _ := dataset.Glob(filepath.Join(work, "data", "housing-train-*"))
	test, _ := dataset.Glob(filepath.Join(work, "data", "housing-test-*"))
	return leastSquaresTestMSE(t, &dataset.ConvertResult{TrainFiles: train, TestFiles: test})
}

// assertFitALineStatus checks `gctl job status` of the finished job: every
// pass applied every record once and the model got within 5% of opt.
func assertFitALineStatus(t *testing.T, a *e2erig.Agent, opt float64) {
	t.Helper()
	var st api.JobStatus
	e2erig.JSONOf(t, a, &st, "job", "status", "fit-a-line")
	if st.State != api.StateSucceeded || st.Pass != 30 || st.Passes != 30 {
		t.Fatalf("status: state %s pass %d/%d", st.State, st.Pass, st.Passes)
	}
	if len(st.SamplesApplied) != 30 {
		t.Fatalf("samples_applied has %d passes", len(st.SamplesApplied))
	}
	for p, n := range st.SamplesApplied {
		if n != 404 {
			t.Errorf("pass %d: samples_applied %d, want 404", p, n)
		}
	}
	// Within 10%: the last iterate of constant-rate SGD moves by a few
	// percent with the record order (data.shuffle).
	switch {
	case st.Metrics.TestLoss == nil:
		t.Errorf("no test loss reported")
	case *st.Metrics.TestLoss > 1.10*opt:
		t.Errorf("test loss %.4f not within 10%% of the least-squares optimum %.4f", *st.Metrics.TestLoss, opt)
	}
	if len(st.Trainers) != 2 || len(st.Pservers) != 2 || st.Master.Name != "master" {
		t.Errorf("status lists %d trainers, %d pservers, master %q", len(st.Trainers), len(st.Pservers), st.Master.Name)
	}
	if _, err := os.Stat(filepath.Join(st.ModelDir, "latest", "manifest.json")); err != nil {
		t.Errorf("model: %v", err)
	}
	// Nothing was disturbed: a rollback or a restart here is a bug, even
	// when the model comes out right.
	for _, e := range st.Events {
		if strings.Contains(e.What, "rolled back") || strings.Contains(e.What, "restart") {
			t.Errorf("undisturbed run has event %q", e.What)
		}
	}
}

// assertFitALineListings checks the workers, job list, logs and node list
// gctl shows for the finished job.
func assertFitALineListings(t *testing.T, a *e2erig.Agent) {
	t.Helper()
	var workers []api.WorkerRow
	e2erig.JSONOf(t, a, &workers, "job", "workers", "fit-a-line")
	if len(workers) != 5 {
		t.Fatalf("workers: %+v", workers)
	}
	for _, w := range workers {
		if w.Node != "e2e-node" || w.Start.IsZero() {
			t.Errorf("worker %+v: want node e2e-node and a start time", w)
		}
		if _, err := os.Stat(filepath.Join(a.DataDir, "jobs", "fit-a-line", "log", w.Name+".log")); err != nil {
			t.Errorf("log of %s: %v", w.Name, err)
		}
	}
	var jobs []api.JobRow
	e2erig.JSONOf(t, a, &jobs, "job", "list")
	if len(jobs) != 1 || jobs[0].Name != "fit-a-line" || jobs[0].State != api.StateSucceeded {
		t.Errorf("job list: %+v", jobs)
	}
	out, _, code := a.Gctl(t, "job", "logs", "fit-a-line", "-w", "master", "-n", "50")
	if code != 0 || !strings.Contains(out, "pass finished") {
		t.Errorf("job logs -w master: exit %d:\n%s", code, out)
	}
	var nodes []api.NodeRow
	e2erig.JSONOf(t, a, &nodes, "node", "list")
	if len(nodes) != 1 || nodes[0].State != "ready" || nodes[0].CPU < 1 {
		t.Errorf("node list: %+v", nodes)
	}
}

// TestProcessBadInput: every kind of bad input gets a clear message naming
// the problem and exit code 2, and nothing crashes.
func TestProcessBadInput(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real processes")
	}
	work := t.TempDir()
	a := e2erig.StartAgent(t, filepath.Join(work, "agent"))
	e2erig.Housing(t, filepath.Join(work, "data"))

	cases := []struct {
		name string
		args func() []string
		want string
	}{
		{"negative trainers", func() []string {
			return []string{"job", "start", "-f", e2erig.WriteSpecText(t, work, strings.Replace(specyaml.Marshal(fitALineJob("bad", jobspec.ModeSync, 1, "data")), "trainers: 2", "trainers: -1", 1))}
		}, "trainers"},
		{"unknown field", func() []string {
			return []string{"job", "start", "-f", e2erig.WriteSpecText(t, work, specyaml.Marshal(fitALineJob("bad", jobspec.ModeSync, 1, "data"))+"learning_rat: 3\n")}
		}, "learning_rat"},
		{"bad job name", func() []string {
			return []string{"job", "start", "-f", e2erig.WriteSpec(t, work, fitALineJob("bad_name", jobspec.ModeSync, 1, "data"))}
		}, "_"},
		{"glob matches nothing", func() []string {
			return []string{"job", "start", "-f", e2erig.WriteSpecText(t, work, strings.Replace(specyaml.Marshal(fitALineJob("nodata", jobspec.ModeSync, 1, "data")), "data/housing-train-*", "data/nothing-*", 1))}
		}, "data.train"},
		{"inputs do not match the records", func() []string {
			return []string{"job", "start", "-f", e2erig.WriteSpecText(t, work, strings.Replace(specyaml.Marshal(fitALineJob("inputs", jobspec.ModeSync, 1, "data")), "inputs: 13", "inputs: 12", 1))}
		}, "model.inputs"},
		{"unknown job", func() []string { return []string{"job", "status", "no-such-job"} }, "no-such-job"},
		{"unknown job logs", func() []string { return []string{"job", "logs", "no-such-job"} }, "no-such-job"},
		{"unknown flag", func() []string { return []string{"job", "list", "--bogus"} }, "bogus"},
		{"convert: missing input", func() []string {
			return []string{"data", "convert", "--format", "csv", "--input", filepath.Join(work, "missing.csv"), "--out", filepath.Join(work, "x/y"), "--shards", "1"}
		}, "missing.csv"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, errs, code := a.Gctl(t, c.args()...)
			if code != 2 {
				t.Errorf("exit %d, want 2\nstdout: %s\nstderr: %s", code, out, errs)
			}
			if !strings.Contains(errs, c.want) {
				t.Errorf("message does not name %q:\n%s", c.want, errs)
			}
		})
	}
	// An unreachable agent is a failure (1), with what to do.
	_, errs, code := e2erig.RunGctl(t, "127.0.0.1:1", "job", "list")
	if code != 1 || !strings.Contains(errs, "gtraind agent") {
		t.Errorf("unreachable agent: exit %d: %s", code, errs)
	}
}
