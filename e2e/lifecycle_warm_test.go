package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gtrain/gtrain/api"
	"github.com/gtrain/gtrain/internal/testing/e2erig"
	"github.com/gtrain/gtrain/jobspec"
	"github.com/gtrain/gtrain/model"
)

// warmJob is fit-a-line in sync mode over the stored record order (no
// shuffle, so that a pass's data does not depend on its number) by adam,
// whose moments and step count a pass's model keeps: a job started from
// another's pass P with its optimizer state then trains exactly what the
// uninterrupted run trains after P.
func warmJob(name string, passes int) jobspec.Spec {
	s := fitALineJob(name, jobspec.ModeSync, passes, "data")
	s.Data.Shuffle = new(false)
	s.Optimizer = jobspec.OptimizerSpec{Kind: jobspec.OptimizerAdam, LearningRate: 0.01}
	return s
}

func succeededJob(st api.JobStatus) bool { return st.State == api.StateSucceeded }

// TestLifecycleWarmStart: a job trains 3 passes; a second job init_from its
// pass 2 with its optimizer state for 2 passes ends with the model, bit for
// bit, of an uninterrupted 5-pass run, and one without the state does not;
// a job that freezes w keeps pass 2's w; a model of other shapes, or state
// of another optimizer, is rejected (exit 2) naming the field.
func TestLifecycleWarmStart(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real processes")
	}
	work := t.TempDir()
	a := e2erig.StartAgent(t, filepath.Join(work, "agent"))
	e2erig.Housing(t, filepath.Join(work, "data"))

	e2erig.StartDetached(t, a, warmJob("first", 3))
	e2erig.StartDetached(t, a, warmJob("whole", 5))
	first := e2erig.WaitJob(t, a, "first", "first to succeed", 4*time.Minute, succeededJob)

	cont := warmJob("cont", 2)
	cont.InitFrom = jobspec.InitFromSpec{Job: "first", Pass: new(2), OptimizerState: true}
	e2erig.StartDetached(t, a, cont)
	cold := warmJob("cold", 2)
	cold.InitFrom = jobspec.InitFromSpec{Job: "first", Pass: new(2)}
	e2erig.StartDetached(t, a, cold)
	otherOpt := warmJob("other-opt", 2)
	otherOpt.Optimizer.Kind = jobspec.OptimizerMomentum
	otherOpt.InitFrom = cont.InitFrom
	if _, errs, code := a.Gctl(t, "job", "start", "-f", a.WriteSpec(t, otherOpt), "--detach"); code != 2 || !strings.Contains(errs, "init_from.optimizer_state") {
		t.Errorf("optimizer state of adam for a momentum job: exit %d, want 2 naming init_from.optimizer_state: %s", code, errs)
	}
	frozen := warmJob("frozen", 1)
	frozen.InitFrom = jobspec.InitFromSpec{Dir: filepath.Join(first.ModelDir, model.PassDirName(2)), Freeze: []string{"w"}}
	e2erig.StartDetached(t, a, frozen)

	// Another model's shapes: exit 2 naming the parameter.
	other := filepath.Join(work, "other-model")
	m, err := model.New(model.Spec{Kind: model.KindLinear, Inputs: 12, Outputs: 1})
	if err != nil {
		t.Fatal(err)
	}
	params := [][]float32{make([]float32, 12), make([]float32, 1)}
	if _, err := model.WriteModel(other, 0, 1, m, params); err != nil {
		t.Fatal(err)
	}
	bad := warmJob("bad", 1)
	bad.InitFrom = jobspec.InitFromSpec{Dir: filepath.Join(other, model.LatestLink)}
	if _, errs, code := a.Gctl(t, "job", "start", "-f", a.WriteSpec(t, bad), "--detach"); code != 2 || !strings.Contains(errs, `"w"`) || !strings.Contains(errs, "init_from") {
		t.Errorf("init_from a model of other shapes: exit %d, want 2 naming init_from and w: %s", code, errs)
	}

	whole := e2erig.WaitJob(t, a, "whole", "whole to succeed", 4*time.Minute, succeededJob)
	st := e2erig.WaitJob(t, a, "cont", "cont to succeed", 4*time.Minute, succeededJob)
	e2erig.AssertSameModel(t, st, e2erig.ManifestSums(t, whole.ModelDir))
	cst := e2erig.WaitJob(t, a, "cold", "cold to succeed", 4*time.Minute, succeededJob)
	if e2erig.ManifestSums(t, cst.ModelDir) == e2erig.ManifestSums(t, whole.ModelDir) {
		t.Error("a warm start without the optimizer state ended with the uninterrupted model too: the test cannot see the state")
	}

	fz := e2erig.WaitJob(t, a, "frozen", "frozen to succeed", 4*time.Minute, succeededJob)
	start := warmParamSums(t, filepath.Join(first.ModelDir, model.PassDirName(2)))
	end := warmParamSums(t, filepath.Join(fz.ModelDir, model.LatestLink))
	if start["w"] != end["w"] || start["b"] == end["b"] {
		t.Errorf("freeze [w]: w %s -> %s (want unchanged), b %s -> %s (want changed)", start["w"], end["w"], start["b"], end["b"])
	}
	if _, err := os.Stat(filepath.Join(fz.ModelDir, model.LatestLink)); err != nil {
		t.Fatal(err)
	}
}

// warmParamSums is the sha256 of each parameter of the model in dir.
func warmParamSums(t *testing.T, dir string) map[string]string {
	t.Helper()
	man, _, err := model.ReadModel(dir)
	if err != nil {
		t.Fatal(err)
	}
	sums := map[string]string{}
	for _, p := range man.Params {
		sums[p.Name] = p.SHA256
	}
	return sums
}
