package core

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/gtrain/gtrain/api"
)

// Tests of the pure core: no store, no goroutine, no sleep; time is passed in.

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// newCore is a fresh core over coreTaskSet (42 records; with 3 trainers of
// batch 4, a pass is steps 0..3).
func newCore(t *testing.T, cfg CoreConfig) *Core {
	t.Helper()
	c, eff, err := NewCore(cfg, FixtureTaskSet(), nil, nil, t0, nil)
	if err != nil {
		t.Fatalf("NewCore: %v", err)
	}
	if !eff.Changed || eff.PassEnd != nil {
		t.Fatalf("NewCore of a fresh job: effects %+v, want a change to save and no pass end", eff)
	}
	return c
}

// commitSteps has every trainer ask for and report steps [from, to).
func commitSteps(t *testing.T, c *Core, from, to int64, now time.Time) Effects {
	t.Helper()
	var last Effects
	for s := from; s < to; s++ {
		for k := 0; k < c.cfg.Trainers; k++ {
			w := c.Step(k, s, c.meta.Epoch, now)
			eff, err := c.StepDone(k, k, s, c.meta.Epoch, 1, int64(len(SliceRecords(w.Slices))), now)
			if err != nil {
				t.Fatalf("StepDone(trainer %d, step %d): %v", k, s, err)
			}
			last = eff
		}
	}
	return last
}

func TestCoreStepAnswers(t *testing.T) {
	cases := []struct {
		name        string
		setup       func(t *testing.T, c *Core)
		step, epoch int64
		want        Work // Slices and Checkpoint not compared
	}{
		{"the first step", nil, 0, 0, Work{Status: api.WorkStatus_WORK_READY, Step: 0}},
		{"a committed step: the job's step instead",
			func(t *testing.T, c *Core) { commitSteps(t, c, 0, 2, t0) },
			0, 0, Work{Status: api.WorkStatus_WORK_READY, Step: 2}},
		{"a step ahead of the job: the master chooses, the job's step first", nil, 1, 0, Work{Status: api.WorkStatus_WORK_READY, Step: 0}},
		{"an older epoch: the job's step and epoch",
			func(t *testing.T, c *Core) { c.meta.Epoch, c.meta.Step = 3, 1 },
			0, 2, Work{Status: api.WorkStatus_WORK_READY, Step: 1, Epoch: 3}},
		{"past the pass", func(t *testing.T, c *Core) { commitSteps(t, c, 0, 4, t0) }, 4, 0, Work{Status: api.WorkStatus_WORK_WAIT, Step: 4}},
		{"its micro-batch of the job's step held: the next step's",
			func(t *testing.T, c *Core) { c.Step(1, 0, 0, t0) }, 0, 0, Work{Status: api.WorkStatus_WORK_READY, Step: 0}},
		{"every micro-batch of the job's step held: the next step's",
			func(t *testing.T, c *Core) {
				for k := range 3 {
					c.Step(k, 0, 0, t0)
				}
				c.StepDone(1, 1, 0, 0, 1, 4, t0)
			}, 0, 0, Work{Status: api.WorkStatus_WORK_READY, Step: 1}},
		{"three steps ahead (reports lost with a master): the job's step", nil, 3, 0, Work{Status: api.WorkStatus_WORK_READY, Step: 0}},
		{"paused for a rollback", func(t *testing.T, c *Core) { c.Pause() },
			0, 0, Work{Status: api.WorkStatus_WORK_WAIT, Step: 0}},
		{"training done", func(t *testing.T, c *Core) { c.meta.Done, c.meta.Epoch = true, 2 },
			7, 0, Work{Status: api.WorkStatus_WORK_DONE, Pass: 1, Epoch: 2}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := newCore(t, FixtureSyncConfig(3, 4, 1))
			if tc.setup != nil {
				tc.setup(t, c)
			}
			got := c.Step(1, tc.step, tc.epoch, t0)
			if got.Status != tc.want.Status || got.Step != tc.want.Step || got.Epoch != tc.want.Epoch || got.Pass != tc.want.Pass {
				t.Fatalf("Step(1, %d, %d) = %+v, want %+v", tc.step, tc.epoch, got, tc.want)
			}
			if ready := got.Status == api.WorkStatus_WORK_READY; ready != (len(got.Slices) > 0) {
				t.Fatalf("Step answered %v with %d slices", got.Status, len(got.Slices))
			}
			// The hint is the same micro-batch's slices one step on, while
			// the pass lasts (FixtureSyncConfig(3, 4, 1): 4 steps).
			switch {
			case got.Status != api.WorkStatus_WORK_READY || !c.plan.Contains(got.Step+1):
				if got.NextSlices != nil {
					t.Fatalf("Step answered %v of step %d with a hint %v", got.Status, got.Step, got.NextSlices)
				}
			case !slices.Equal(got.NextSlices, c.plan.Slices(got.Step+1, got.MicroBatch)) || len(got.NextSlices) == 0:
				t.Fatalf("hint %v for micro-batch %d of step %d; want its slices of step %d", got.NextSlices, got.MicroBatch, got.Step, got.Step+1)
			}
		})
	}
}

func TestCoreStepDone(t *testing.T) {
	type report struct {
		trainer     int
		step, epoch int64
	}
	cases := []struct {
		name      string
		before    []report // accepted first, without error
		report    report
		wantErr   error
		changed   bool
		wantStep  int64
		wantSnaps int
		passEnd   *PassEnd
	}{
		{"a partial step waits", []report{{0, 0, 0}}, report{1, 0, 0}, nil, false, 0, 0, nil},
		{"the last report commits", []report{{0, 0, 0}, {1, 0, 0}}, report{2, 0, 0}, nil, true, 1, 0, nil},
		{"a trainer one step ahead is held back", []report{{1, 0, 0}, {2, 0, 0}, {0, 1, 0}, {1, 1, 0}},
			report{0, 0, 0}, nil, true, 1, 0, nil},
		{"a late peer commits two steps", []report{{1, 0, 0}, {2, 0, 0}, {0, 1, 0}, {1, 1, 0}, {2, 1, 0}},
			report{0, 0, 0}, nil, true, 2, 0, nil},
		{"two steps ahead", nil, report{0, 2, 0}, ErrBadStep, false, 0, 0, nil},
		{"a trainer out of range", nil, report{3, 0, 0}, ErrBadTrainer, false, 0, 0, nil},
		{"another epoch is void", []report{{0, 0, 0}, {1, 0, 0}}, report{2, 0, 1}, nil, false, 0, 0, nil},
		{"the pass's last step ends it, checkpointed",
			[]report{{0, 3, 0}, {1, 3, 0}}, report{2, 3, 0}, nil, true, 4, 1, &PassEnd{Pass: 0, Step: 4, Epoch: 0}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := newCore(t, FixtureSyncConfig(3, 4, 2))
			if tc.passEnd != nil {
				commitSteps(t, c, 0, 3, t0)
			}
			for _, r := range append(tc.before, tc.report) {
				c.Step(r.trainer, r.step, r.epoch, t0) // decides the step's checkpoint flag
			}
			for _, r := range tc.before {
				if _, err := c.StepDone(r.trainer, r.trainer, r.step, r.epoch, 1, 4, t0); err != nil {
					t.Fatalf("StepDone%+v: %v", r, err)
				}
			}
			eff, err := c.StepDone(tc.report.trainer, tc.report.trainer, tc.report.step, tc.report.epoch, 1, 4, t0)
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("StepDone%+v: %v, want %v", tc.report, err, tc.wantErr)
			}
			if eff.Changed != tc.changed || c.meta.Step != tc.wantStep || len(eff.Snapshots) != tc.wantSnaps {
				t.Fatalf("effects %+v and step %d, want changed %v, step %d, %d snapshots", eff, c.meta.Step, tc.changed, tc.wantStep, tc.wantSnaps)
			}
			if (eff.PassEnd == nil) != (tc.passEnd == nil) || (eff.PassEnd != nil && *eff.PassEnd != *tc.passEnd) {
				t.Fatalf("pass end %+v, want %+v", eff.PassEnd, tc.passEnd)
			}
			for _, st := range eff.Snapshots {
				if st.Meta.Step != tc.wantStep || len(st.Statuses) != len(c.tasks.Tasks) {
					t.Fatalf("snapshot at step %d with %d statuses, want step %d and every task", st.Meta.Step, len(st.Statuses), tc.wantStep)
				}
			}
		})
	}
}

func TestCoreCheckpointDecisions(t *testing.T) {
	cases := []struct {
		name  string
		steps int64
		every time.Duration
		at    []time.Duration // when each of steps 0..3 is first asked for
		want  []bool
	}{
		{"only at the pass end", 0, 0, []time.Duration{0, 0, 0, 0}, []bool{false, false, false, true}},
		{"every 2 steps", 2, 0, []time.Duration{0, 0, 0, 0}, []bool{false, true, false, true}},
		{"every 3 steps", 3, 0, []time.Duration{0, 0, 0, 0}, []bool{false, false, true, true}},
		{"every 10s, from the core's start", 0, 10 * time.Second,
			[]time.Duration{9 * time.Second, 10 * time.Second, 19 * time.Second, 21 * time.Second}, []bool{false, true, false, true}},
		{"every 10s, from the last timed one", 0, 10 * time.Second,
			[]time.Duration{10 * time.Second, 15 * time.Second, 20 * time.Second, 20 * time.Second}, []bool{true, false, true, true}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := FixtureSyncConfig(3, 4, 1)
			cfg.CheckpointSteps, cfg.CheckpointEvery = tc.steps, tc.every
			c := newCore(t, cfg)
			var got []bool
			for s := int64(0); s < 4; s++ {
				now := t0.Add(tc.at[s])
				flag := c.Step(0, s, 0, now).Checkpoint
				// Every trainer gets the answer given first, whenever it asks.
				if again := c.Step(2, s, 0, now.Add(time.Hour)).Checkpoint; again != flag {
					t.Fatalf("step %d: checkpoint %v, then %v for another trainer", s, flag, again)
				}
				got = append(got, flag)
				commitSteps(t, c, s, s+1, now)
			}
			if !slices.Equal(got, tc.want) {
				t.Fatalf("checkpoint flags %v, want %v", got, tc.want)
			}
		})
	}
}

func TestCoreTakeSave(t *testing.T) {
	c := newCore(t, FixtureAsyncConfig(2, 4, 2))
	dispatch := func(c *Core, _ time.Time) Effects { _, eff := c.Task(0, t0); return eff }
	steps := []struct {
		name         string
		at           time.Duration
		act          func(c *Core, now time.Time) Effects
		wantChanged  int // task statuses in the save
		wantProgress bool
		wantSlot     int
	}{
		{"the first save writes every task into the other slot, and the progress", 0, nil, 6, true, 1},
		{"a change within ProgressEvery skips the progress", 100 * time.Millisecond, dispatch, 1, false, 1},
		{"nothing changed", 200 * time.Millisecond, nil, 0, false, 1},
		{"a flush makes the next save write it", 200 * time.Millisecond,
			func(c *Core, _ time.Time) Effects { return c.FlushProgress() }, 0, true, 1},
		{"a flush with the progress saved changes nothing", 300 * time.Millisecond,
			func(c *Core, _ time.Time) Effects { return c.FlushProgress() }, 0, false, 1},
		{"ProgressEvery after the last one", 500 * time.Millisecond, dispatch, 1, true, 1},
		{"a rollback rewrites every task into the other slot", 600 * time.Millisecond,
			func(c *Core, _ time.Time) Effects { eff, _ := c.Rollback(nil, 1, t0); return eff }, 6, true, 0},
	}
	for _, st := range steps {
		now := t0.Add(st.at)
		if st.act != nil {
			// Every action here but a flush of a saved progress is a change.
			if eff := st.act(c, now); eff.Changed != (st.wantChanged > 0 || st.wantProgress) {
				t.Fatalf("%s: effects %+v", st.name, eff)
			}
		}
		s := c.TakeSave(now, now)
		if len(s.Changed) != st.wantChanged || (s.Progress != nil) != st.wantProgress || s.Meta.Slot != st.wantSlot {
			t.Fatalf("%s: save of %d statuses, progress %v, slot %d; want %d, %v, %d",
				st.name, len(s.Changed), s.Progress != nil, s.Meta.Slot, st.wantChanged, st.wantProgress, st.wantSlot)
		}
		if s.Progress != nil && (s.Progress.Step != c.meta.Step || !s.Progress.Updated.Equal(now) || s.Progress.ModelDir != "/models/x") {
			t.Fatalf("%s: progress %+v at %s", st.name, s.Progress, now)
		}
	}
}

func TestCoreTaskAnswers(t *testing.T) {
	cases := []struct {
		name    string
		setup   func(c *Core)
		want    api.WorkStatus
		changed bool
		passEnd bool
	}{
		{"a task to hand out", nil, api.WorkStatus_WORK_READY, true, false},
		{"every task held", func(c *Core) {
			// One task per holder: a trainer asking again gives back what it held.
			for i := range c.tasks.Tasks {
				c.Task(1+i, t0)
			}
		}, api.WorkStatus_WORK_WAIT, false, false},
		{"every task done ends the pass", func(c *Core) {
			for range c.tasks.Tasks {
				w, _ := c.Task(1, t0)
				c.Report(1, w.Task.ID, -1, 1, int64(w.Task.Records))
			}
		}, api.WorkStatus_WORK_WAIT, false, true},
		{"a pass end under way", func(c *Core) { c.ending = true }, api.WorkStatus_WORK_WAIT, false, false},
		{"training done", func(c *Core) { c.meta.Done = true }, api.WorkStatus_WORK_DONE, false, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := newCore(t, FixtureAsyncConfig(2, 4, 1))
			if tc.setup != nil {
				tc.setup(c)
			}
			w, eff := c.Task(0, t0)
			if w.Status != tc.want || eff.Changed != tc.changed || (eff.PassEnd != nil) != tc.passEnd {
				t.Fatalf("Task = %+v with effects %+v; want %v, changed %v, pass end %v", w, eff, tc.want, tc.changed, tc.passEnd)
			}
			if tc.want == api.WorkStatus_WORK_DONE && w.Pass != c.cfg.Passes {
				t.Fatalf("DONE with pass %d, want %d", w.Pass, c.cfg.Passes)
			}
		})
	}
}

func TestCoreTimeoutsAndLostTrainers(t *testing.T) {
	timeout := FixtureAsyncConfig(1, 1, 1).Queue.Timeout
	cases := []struct {
		name    string
		sync    bool
		act     func(c *Core) Effects
		changed bool
		todo    int // tasks todo after act (of 6, trainer 0 holding 1 and trainer 1 holding 1)
	}{
		{"before the deadline", false, func(c *Core) Effects { return c.Tick(t0.Add(timeout - time.Second)) }, false, 4},
		{"at the deadline", false, func(c *Core) Effects { return c.Tick(t0.Add(timeout)) }, true, 6},
		{"a lost trainer", false, func(c *Core) Effects { return c.TrainerLost(1) }, true, 5},
		{"a lost trainer holding nothing", false, func(c *Core) Effects { return c.TrainerLost(5) }, false, 4},
		{"sync: no timeouts", true, func(c *Core) Effects { return c.Tick(t0.Add(2 * timeout)) }, false, 4},
		{"sync: the group holds the tasks", true, func(c *Core) Effects { return c.TrainerLost(1) }, false, 4},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := FixtureAsyncConfig(6, 4, 1)
			cfg.Sync = tc.sync
			cfg.MicroBatches = 6
			c := newCore(t, cfg)
			c.q.Dispatch(0, t0)
			c.q.Dispatch(1, t0)
			if eff := tc.act(c); eff.Changed != tc.changed || eff.PassEnd != nil {
				t.Fatalf("effects %+v, want changed %v and no pass end", eff, tc.changed)
			}
			if n := c.q.Counts(); n.Todo != tc.todo {
				t.Fatalf("counts %+v, want %d todo", n, tc.todo)
			}
		})
	}
}

func TestCorePassEnded(t *testing.T) {
	loss := 7.0
	metrics := api.Metrics{TestLoss: &loss}
	cases := []struct {
		name     string
		passes   int
		end      PassEnd
		changed  bool
		wantPass int
		wantDone bool
	}{
		{"the pass under way", 2, PassEnd{Pass: 0, Step: 4, Epoch: 0}, true, 1, false},
		{"the last pass", 1, PassEnd{Pass: 0, Step: 4, Epoch: 0}, true, 1, true},
		{"an epoch rolled back meanwhile", 2, PassEnd{Pass: 0, Step: 4, Epoch: 1}, false, 0, false},
		{"another pass", 2, PassEnd{Pass: 1, Step: 4, Epoch: 0}, false, 0, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := newCore(t, FixtureSyncConfig(3, 4, tc.passes))
			eff := commitSteps(t, c, 0, 4, t0)
			if eff.PassEnd == nil || *eff.PassEnd != (PassEnd{Pass: 0, Step: 4}) {
				t.Fatalf("the last step's pass end %+v, want pass 0 at step 4", eff.PassEnd)
			}
			if got := c.PassEnded(tc.end, metrics, time.Unix(100, 0)); got.Changed != tc.changed {
				t.Fatalf("PassEnded(%+v) effects %+v, want changed %v", tc.end, got, tc.changed)
			}
			m := c.Meta()
			if m.Pass != tc.wantPass || m.Done != tc.wantDone {
				t.Fatalf("after PassEnded: pass %d done %v, want %d and %v", m.Pass, m.Done, tc.wantPass, tc.wantDone)
			}
			if !tc.changed {
				if !c.ending || m.SamplesApplied != nil {
					t.Fatalf("a void pass end changed the state: ending %v, %+v", c.ending, m)
				}
				return
			}
			if !slices.Equal(m.SamplesApplied, []int64{42}) || m.PassSamples != 0 || *m.Metrics.TestLoss != loss ||
				m.Metrics.TrainLoss == nil || *m.Metrics.TrainLoss != 12.0/42 {
				t.Fatalf("after the pass: %+v, want 42 samples applied, test loss %v, train loss 12/42", m, loss)
			}
			if !tc.wantDone && (c.plan.Pass != 1 || c.plan.StartStep != 4 || c.Step(0, 4, 0, t0).Status != api.WorkStatus_WORK_READY) {
				t.Fatalf("the next pass is planned as %+v, want pass 1 from step 4", c.plan)
			}
		})
	}
}

func TestCoreRollback(t *testing.T) {
	cases := []struct {
		name      string
		toStep    int64 // 0: the start (no state)
		epoch     int64 // asked for
		wantEpoch int64
		passEnd   bool
	}{
		{"to the start", 0, 5, 5, false},
		{"to a checkpoint, the epoch above the master's", 2, 0, 1, false},
		{"to a pass end: it is evaluated again", 4, 3, 3, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := newCore(t, FixtureSyncConfig(3, 4, 2))
			var state *State
			if tc.toStep > 0 {
				commitSteps(t, c, 0, tc.toStep, t0)
				st := c.state()
				state = &st
			}
			commitSteps(t, c, tc.toStep, 3, t0)
			c.StepDone(0, 0, 3, 0, 1, 4, t0) // a report of the abandoned history
			c.Pause()
			eff, err := c.Rollback(state, tc.epoch, t0)
			if err != nil {
				t.Fatal(err)
			}
			if !eff.Changed || !eff.CancelPassEnd || (eff.PassEnd != nil) != tc.passEnd {
				t.Fatalf("effects %+v, want a change, the pass end under way cancelled, a new one %v", eff, tc.passEnd)
			}
			if m := c.Meta(); m.Step != tc.toStep || m.Epoch != tc.wantEpoch || len(c.reports) != 0 || c.paused {
				t.Fatalf("after the rollback: step %d epoch %d, %d reports, paused %v; want step %d epoch %d, none, false",
					m.Step, m.Epoch, len(c.reports), c.paused, tc.toStep, tc.wantEpoch)
			}
			if w := c.Step(0, 3, 0, t0); !tc.passEnd && (w.Status != api.WorkStatus_WORK_READY || w.Step != tc.toStep || w.Epoch != tc.wantEpoch) {
				t.Fatalf("a trainer of the old epoch is answered %+v, want step %d of epoch %d", w, tc.toStep, tc.wantEpoch)
			}
			if eff, _ := c.StepDone(0, 0, tc.toStep, 0, 1, 4, t0); eff.Changed || len(c.reports) != 0 {
				t.Fatal("a report of the old epoch was counted")
			}
		})
	}
}

func TestCoreStalled(t *testing.T) {
	const after = 30 * time.Second
	cases := []struct {
		name        string
		sync        bool
		setup       func(c *Core)
		waited      time.Duration
		wantStalled bool
		wantMissing []int
	}{
		{"async never stalls", false, nil, time.Hour, false, nil},
		{"before the threshold", true, nil, 29 * time.Second, false, nil},
		{"past it: who has not reported", true, nil, 31 * time.Second, true, []int{0, 2}},
		{"paused for a rollback", true, func(c *Core) { c.Pause() }, time.Hour, false, nil},
		{"a pass end is evaluated", true, func(c *Core) { c.ending = true }, time.Hour, false, nil},
		{"training done", true, func(c *Core) { c.meta.Done = true }, time.Hour, false, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := FixtureSyncConfig(3, 4, 1)
			cfg.Sync = tc.sync
			c := newCore(t, cfg)
			if tc.setup != nil {
				tc.setup(c)
			}
			if _, _, stalled := c.Stalled(after, t0); stalled {
				t.Fatal("stalled at once")
			}
			if tc.sync {
				for k := range 3 {
					c.Step(k, 0, 0, t0) // each holds its micro-batch
				}
				c.StepDone(1, 1, 0, 0, 1, 4, t0)
				c.Step(1, 0, 0, t0.Add(tc.waited)) // a live trainer keeps asking
			}
			step, missing, stalled := c.Stalled(after, t0.Add(tc.waited))
			if stalled != tc.wantStalled || !slices.Equal(missing, tc.wantMissing) || step != 0 {
				t.Fatalf("Stalled = step %d missing %v stalled %v; want step 0, missing %v, stalled %v", step, missing, stalled, tc.wantMissing, tc.wantStalled)
			}
		})
	}
}

func TestNewCoreRestores(t *testing.T) {
	ts := FixtureTaskSet()
	fresh := newCore(t, FixtureSyncConfig(3, 4, 2))
	commitSteps(t, fresh, 0, 4, t0)
	atPassEnd := fresh.state()
	cases := []struct {
		name    string
		meta    Meta
		wantErr error
		passEnd bool
	}{
		{"at a pass end: evaluated again", atPassEnd.Meta, nil, true},
		{"training done", Meta{Tasks: len(ts.Tasks), Pass: 2, Done: true}, nil, false},
		{"cut from other data", Meta{Tasks: len(ts.Tasks) + 1}, ErrStaleState, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, eff, err := NewCore(FixtureSyncConfig(3, 4, 2), ts, &tc.meta, atPassEnd.Statuses, t0, nil)
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("NewCore: %v, want %v", err, tc.wantErr)
			}
			if err != nil {
				return
			}
			if eff.Changed || (eff.PassEnd != nil) != tc.passEnd {
				t.Fatalf("restore effects %+v, want nothing to save, a pass end %v", eff, tc.passEnd)
			}
			if m := c.Meta(); m.Step != tc.meta.Step || m.Pass != tc.meta.Pass {
				t.Fatalf("restored at pass %d step %d, want %d and %d", m.Pass, m.Step, tc.meta.Pass, tc.meta.Step)
			}
		})
	}
}

// A job that finished, or evaluates its last pass, is finishing: a re-shard
// must not pause it for a rollback, and a rollback of a finished job is
// refused (it cleared Done: a SUCCEEDED job lost its last pass's samples in
// status). A job evaluating an earlier pass is not finishing.
func TestCoreFinishingRefusesRollback(t *testing.T) {
	c := newCore(t, FixtureSyncConfig(3, 4, 2))
	commitSteps(t, c, 0, 4, t0)
	if !c.ending || c.Finishing() {
		t.Fatalf("evaluating pass 0 of 2: ending %v, finishing %v; want true, false", c.ending, c.Finishing())
	}
	c.PassEnded(PassEnd{Pass: 0, Step: 4}, api.Metrics{}, t0)
	commitSteps(t, c, 4, 8, t0)
	if !c.Finishing() {
		t.Fatal("evaluating the last pass: not finishing")
	}
	c.PassEnded(PassEnd{Pass: 1, Step: 8}, api.Metrics{}, t0)
	if !c.Meta().Done || !c.Finishing() {
		t.Fatalf("after the last pass: done %v, finishing %v", c.Meta().Done, c.Finishing())
	}
	if _, err := c.Rollback(nil, 1, t0); !errors.Is(err, ErrJobDone) {
		t.Fatalf("rollback of a finished job: %v, want ErrJobDone", err)
	}
	if m := c.Meta(); !m.Done || len(m.SamplesApplied) != 2 {
		t.Fatalf("the refused rollback changed the job: %+v", m)
	}
}

// A rollback starts its step anew: the time the step waited before it (for
// a silent pserver, whose restart rolled the job back) is not the
// trainers' stall. Seen in CI: a trainer whose push waited for a stopped
// pserver was declared hung 0.4 s after the pserver's replacement rolled
// the job back.
func TestCoreRollbackRestartsTheStallClock(t *testing.T) {
	const after = 5 * time.Second
	c := newCore(t, FixtureSyncConfig(3, 4, 1))
	c.Stalled(after, t0) // the step starts waiting
	rolled := t0.Add(after + time.Second)
	if _, err := c.Rollback(nil, 1, rolled); err != nil {
		t.Fatal(err)
	}
	for k := range 3 {
		c.Step(k, 0, 1, rolled) // each holds its micro-batch of the new epoch
	}
	if _, err := c.StepDone(1, 1, 0, 1, 1, 4, rolled); err != nil {
		t.Fatal(err)
	}
	if _, missing, stalled := c.Stalled(after, rolled.Add(time.Second)); stalled {
		t.Fatalf("1 s after the rollback: stalled, missing %v", missing)
	}
	c.Step(1, 0, 1, rolled.Add(after+time.Second)) // a live trainer keeps asking
	if _, missing, stalled := c.Stalled(after, rolled.Add(after+time.Second)); !stalled || !slices.Equal(missing, []int{0, 2}) {
		t.Fatalf("past after since the rollback: stalled %v, missing %v; want trainers 0 and 2", stalled, missing)
	}
}
