package core

import (
	"encoding/json"
	"math"
	"testing"

	"github.com/gtrain/gtrain/api"
)

// A job whose loss or metrics stop being finite fails with the reason, its
// state stays encodable (the master used to panic on a NaN in its meta),
// and it hands out no more work.
func TestCoreDiverges(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	cases := []struct {
		name string
		cfg  CoreConfig
		act  func(t *testing.T, c *Core) Effects
		want string
	}{
		{"a sync step's loss is infinite", FixtureSyncConfig(3, 4, 2), func(t *testing.T, c *Core) Effects {
			commitSteps(t, c, 0, 1, t0)
			c.Step(0, 1, 0, t0)
			eff, err := c.StepDone(0, 0, 1, 0, inf, 4, t0)
			if err != nil {
				t.Fatal(err)
			}
			return eff
		}, "diverged at pass 0 step 1 (loss inf): lower the learning rate"},
		{"a sync step's loss is NaN", FixtureSyncConfig(3, 4, 2), func(t *testing.T, c *Core) Effects {
			c.Step(1, 0, 0, t0)
			eff, _ := c.StepDone(1, 1, 0, 0, nan, 4, t0)
			return eff
		}, "diverged at pass 0 step 0 (loss nan): lower the learning rate"},
		{"an async task's loss is -inf", FixtureAsyncConfig(2, 4, 2), func(t *testing.T, c *Core) Effects {
			w, _ := c.Task(0, t0)
			return c.Report(0, w.Task.ID, -1, math.Inf(-1), 5)
		}, "diverged at pass 0 step 0 (loss -inf): lower the learning rate"},
		{"the pass's test loss is NaN", FixtureSyncConfig(3, 4, 2), func(t *testing.T, c *Core) Effects {
			end := commitSteps(t, c, 0, 4, t0).PassEnd
			return c.PassEnded(*end, api.Metrics{TestLoss: &nan}, t0)
		}, "diverged at pass 0 step 4 (test loss nan): lower the learning rate"},
		{"the evaluator finds a parameter infinite", FixtureSyncConfig(3, 4, 2), func(t *testing.T, c *Core) Effects {
			end := commitSteps(t, c, 0, 4, t0).PassEnd
			return c.PassDiverged(*end, "parameter w holds inf")
		}, "diverged at pass 0 step 4 (parameter w holds inf): lower the learning rate"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := newCore(t, tc.cfg)
			if eff := tc.act(t, c); eff.Fail != tc.want || c.Failed() != tc.want {
				t.Fatalf("effects %+v, Failed %q; want the reason %q", eff, c.Failed(), tc.want)
			}
			if _, err := json.Marshal(c.TakeSave(t0, t0)); err != nil {
				t.Fatalf("the state after a divergence cannot be saved: %v", err)
			}
			if m := c.Meta(); m.Pass != 0 || m.Done {
				t.Fatalf("a diverged pass ended: %+v", m)
			}
			if w := c.Step(2, c.meta.Step, 0, t0); tc.cfg.Sync && w.Status != api.WorkStatus_WORK_WAIT {
				t.Fatalf("a diverged sync job hands out %+v, want WAIT", w)
			}
			if w, _ := c.Task(1, t0); !tc.cfg.Sync && w.Status != api.WorkStatus_WORK_WAIT {
				t.Fatalf("a diverged async job hands out %+v, want WAIT", w)
			}
		})
	}
}

func TestCorePassDivergedOfAnotherEpochIsVoid(t *testing.T) {
	c := newCore(t, FixtureSyncConfig(3, 4, 2))
	end := commitSteps(t, c, 0, 4, t0).PassEnd
	stale := *end
	stale.Epoch++
	if eff := c.PassDiverged(stale, "parameter w holds nan"); eff.Fail != "" || c.Failed() != "" {
		t.Fatalf("a pass end of another epoch failed the job: %+v", eff)
	}
}

// A pass end whose model write fails warns in the progress record until
// the pass ends; a repeat of the failure saves nothing.
func TestCorePassEndWarning(t *testing.T) {
	c := newCore(t, FixtureSyncConfig(3, 4, 2))
	end := *commitSteps(t, c, 0, 4, t0).PassEnd
	c.TakeSave(t0, t0)
	const w = "master cannot write the model of pass 0 to /m: no space left on device"
	if eff := c.PassEndWarning(end, w); !eff.Changed {
		t.Fatalf("the first warning changed nothing: %+v", eff)
	}
	if s := c.TakeSave(t0, t0); s.Progress == nil || len(s.Progress.Warnings) != 1 || s.Progress.Warnings[0] != w {
		t.Fatalf("the next save's progress %+v, want the warning", s.Progress)
	}
	if eff := c.PassEndWarning(end, w+" again"); eff.Changed || c.Warning() != w {
		t.Fatalf("a repeated failure: effects %+v, warning %q; want no change", eff, c.Warning())
	}
	c.PassEnded(end, api.Metrics{}, t0)
	if s := c.TakeSave(t0, t0); c.Warning() != "" || s.Progress == nil || len(s.Progress.Warnings) != 0 {
		t.Fatalf("after the pass ended: warning %q, progress %+v; want none", c.Warning(), s.Progress)
	}
}
