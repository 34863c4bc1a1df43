package e2e

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gtrain/gtrain/internal/testing/e2erig"
	"github.com/gtrain/gtrain/jobspec"
	"github.com/gtrain/gtrain/model"
)

// programRecommenderJob is recommenderJob with the model a numpy program
// (examples/program/numpy_recommender.py: a table per id field, pooled,
// a linear layer on top) over 1 pserver, for 2 passes. numpy, not the
// PyTorch example (program.TestTorchRows tests that): every role starts the
// program, and on a busy machine torch's imports outlast a submit.
func programRecommenderJob(name string, trainers int) jobspec.Spec {
	s := recommenderJob(name, trainers)
	s.Pservers, s.Passes = 1, 2
	s.Model = jobspec.ModelSpec{Kind: jobspec.KindProgram, Entry: "/usr/bin/python3 numpy_recommender.py", Workspace: "ws",
		Outputs: 1, Timeout: "60s"}
	s.Resources = jobspec.ResourcesSpec{Trainer: jobspec.Resource{CPU: 0.5, Memory: "256Mi"}} // the program's limit, required by a sandboxing agent
	return s
}

// TestProgramRecommender (issue 20): a program declaring a table that is
// no id field of the records is refused at submit (exit 2). A numpy
// program declares an embedding table per id field and trains on MovieLens-shaped data, its rows pulled
// from and pushed to the pservers as the built-in recommender's. Runs with
// 1 and 2 trainers end with the same model, bit for bit (the dense
// parameters, the rows the pass model keeps, the test loss of every pass,
// which the master's program evaluates with the rows), and the training
// loss falls.
func TestProgramRecommender(t *testing.T) {
	if testing.Short() {
		t.Skip("real processes")
	}
	work := t.TempDir()
	recommenderData(t, work)
	ws := filepath.Join(work, "ws")
	if err := os.Mkdir(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"examples/program/gtrainprog.py", "examples/program/numpy_recommender.py", "program/testdata/rows.py"} {
		b, err := os.ReadFile(filepath.Join(e2erig.RepoRoot(), f))
		if err == nil {
			err = os.WriteFile(filepath.Join(ws, filepath.Base(f)), b, 0o755)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	a := e2erig.StartAgent(t, filepath.Join(work, "agent"))
	bad := programRecommenderJob("prec-bad", 1)
	bad.Model.Entry = "/usr/bin/python3 rows.py no-field"
	_, errs, code := a.Gctl(t, "job", "start", "-f", a.WriteSpec(t, bad), "--detach")
	if want := `table 0 is named "nosuch", which is no id field of the records`; code != 2 || !strings.Contains(errs, want) {
		t.Errorf("a program declaring a table of no id field: exit %d (%s), want 2 and %q", code, errs, want)
	}
	for _, s := range []jobspec.Spec{programRecommenderJob("prec-2", 2), programRecommenderJob("prec-1", 1)} {
		e2erig.StartDetached(t, a, s)
	}
	two := e2erig.WaitJob(t, a, "prec-2", "prec-2 to succeed", 3*time.Minute, e2erig.Succeeded)
	one := e2erig.WaitJob(t, a, "prec-1", "prec-1 to succeed", 3*time.Minute, e2erig.Succeeded)
	man, _, err := model.ReadModel(filepath.Join(two.ModelDir, model.LatestLink))
	if err != nil {
		t.Fatal(err)
	}
	if len(man.Tables) != 7 || man.Tables[0].Rows == 0 {
		t.Errorf("the model keeps tables %+v, want the rows of the 7 id fields", man.Tables)
	}
	h := two.History
	for p, m := range h {
		t.Logf("pass %d: train loss %v, test loss %v", p, deref(m.TrainLoss), deref(m.TestLoss))
	}
	if len(h) != 2 || h[0].TestLoss == nil || math.IsNaN(*h[1].TestLoss) || *h[1].TrainLoss >= *h[0].TrainLoss {
		t.Errorf("history %+v: want 2 passes with a test loss and a falling train loss", h)
	}
	assertSameRecommender(t, one, two)
}
