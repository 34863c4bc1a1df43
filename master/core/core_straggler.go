package core

import (
	"slices"
	"time"

	"github.com/gtrain/gtrain/jobspec"
)

// Stragglers (sync). A micro-batch handed out longer ago than the straggler
// deadline and not reported is handed once more, to the next trainer that
// asks with nothing else to do; whichever result comes first counts (the
// pservers and StepDone keep the first of a micro-batch), so the model is the
// same either way and a slow (not dead) trainer holds a step no longer than
// the deadline. The deadline follows the micro-batch times seen.

// Straggler deadline defaults (the job spec's `stragglers`): StragglerFactor
// times the recent mean time of a micro-batch (hand-out to report), at
// least StragglerFloor.
const (
	DefaultStragglerFactor = jobspec.DefaultStragglerFactor
	DefaultStragglerFloor  = jobspec.DefaultStragglerWait
)

// timing is what the core keeps of micro-batch times.
type timing struct {
	handedAt map[int64]map[int]time.Time // first hand-out, by step and micro-batch
	redone   map[int64]map[int]bool      // handed a second time (once at most)
	mean     time.Duration               // recent mean, hand-out to report
	last     map[int]time.Duration       // each trainer's last micro-batch time
	started  map[int]handOut             // what each trainer got last, when (one at a time)
	seen     map[int]time.Time           // when each trainer last asked or reported
	// stepStart is when the committed step became current: a micro-batch
	// handed out before (a trainer one step ahead) waits for it, and that
	// wait is not the trainer's slowness.
	stepStart time.Time
	current   int64 // the step stepStart is of
}

type handOut struct {
	step int64
	at   time.Time
}

func newTiming() timing {
	return timing{handedAt: map[int64]map[int]time.Time{}, redone: map[int64]map[int]bool{}, last: map[int]time.Duration{}, started: map[int]handOut{}, seen: map[int]time.Time{}}
}

// noteHandOut records when trainer got micro-batch mb of step s, and when
// the micro-batch was first handed out.
func (tm *timing) noteHandOut(trainer int, s int64, mb int, now time.Time) {
	tm.started[trainer] = handOut{step: s, at: now}
	if tm.handedAt[s] == nil {
		tm.handedAt[s] = map[int]time.Time{}
	}
	if _, ok := tm.handedAt[s][mb]; !ok {
		tm.handedAt[s][mb] = now
	}
}

// noteReport folds the time trainer took for the micro-batch it reports
// into the mean and its last.
func (tm *timing) noteReport(trainer int, now time.Time) {
	h, ok := tm.started[trainer]
	if !ok {
		return
	}
	delete(tm.started, trainer)
	d := now.Sub(tm.startOf(h))
	tm.last[trainer] = d
	if tm.mean == 0 {
		tm.mean = d
	} else {
		tm.mean = (7*tm.mean + d) / 8
	}
}

// since is when a micro-batch handed out at `at` could start: not before
// the step it belongs to is current.
func (tm *timing) since(at time.Time) time.Time {
	if at.Before(tm.stepStart) {
		return tm.stepStart
	}
	return at
}

// startOf is when trainer's hand-out h could start: its step's start, for
// a micro-batch of the current step (or a later one) handed out before;
// a micro-batch of a step committed without it started when handed out.
func (tm *timing) startOf(h handOut) time.Time {
	if h.step < tm.current {
		return h.at
	}
	return tm.since(h.at)
}

// committed drops what is kept of step s, committed at now, and starts the
// clock of the next.
func (tm *timing) committed(s int64, now time.Time) {
	delete(tm.handedAt, s)
	delete(tm.redone, s)
	tm.stepStart, tm.current = now, s+1
}

// reset drops everything kept of steps (a rollback).
func (tm *timing) reset() {
	clear(tm.handedAt)
	clear(tm.redone)
	clear(tm.started)
}

// deadline is how long a micro-batch may take before it is handed again.
func (c *Core) stragglerDeadline() time.Duration {
	factor, floor := c.cfg.StragglerFactor, c.cfg.StragglerFloor
	if factor <= 0 {
		factor = DefaultStragglerFactor
	}
	if floor <= 0 {
		floor = DefaultStragglerFloor
	}
	return max(floor, time.Duration(factor)*c.timing.mean)
}

// straggling finds a micro-batch of the committed step held by another
// trainer past the deadline, not reported and not yet handed again, and
// marks it handed again.
func (c *Core) straggling(trainer int, now time.Time) (int, bool) {
	s := c.meta.Step
	deadline := c.stragglerDeadline()
	for mb := range c.cfg.MicroBatches {
		holder, held := c.assigned[s][mb]
		_, reported := c.reports[s][mb]
		at, handed := c.timing.handedAt[s][mb]
		if !held || holder == trainer || reported || !handed || c.timing.redone[s][mb] || now.Sub(c.timing.since(at)) < deadline {
			continue
		}
		if c.timing.redone[s] == nil {
			c.timing.redone[s] = map[int]bool{}
		}
		c.timing.redone[s][mb] = true
		c.timing.started[trainer] = handOut{step: s, at: now}
		c.log.Warn("micro-batch past the straggler deadline; handed to another trainer too", "step", s, "micro_batch", mb,
			"holder", holder, "trainer", trainer, "deadline", deadline)
		return mb, true
	}
	return 0, false
}

// StepTimes returns each trainer's last micro-batch time (hand-out to report).
func (c *Core) StepTimes() map[int]time.Duration {
	out := make(map[int]time.Duration, len(c.timing.last))
	for t, d := range c.timing.last {
		out[t] = d
	}
	return out
}

// stepMs is StepTimes in milliseconds for the progress record; nil when none.
func (c *Core) stepMs() map[int]float64 {
	if len(c.timing.last) == 0 {
		return nil
	}
	out := make(map[int]float64, len(c.timing.last))
	for t, d := range c.timing.last {
		out[t] = float64(d.Microseconds()) / 1000
	}
	return out
}

// stuckTrainers lists the trainers that have held a micro-batch longer than
// after, counted from when its step became current, and the ones holding
// none that have not asked for work for longer than after and three long
// polls (a working trainer asks at least once a long poll): hung, whether or
// not the others did their work. A trainer whose lease ended is listed too:
// a stopped process loses its lease and still runs (the hung watch kills
// only processes that run).
func (c *Core) stuckTrainers(after time.Duration, now time.Time) []int {
	var out []int
	for t, h := range c.timing.started {
		if now.Sub(c.timing.startOf(h)) >= after {
			out = append(out, t)
		}
	}
	idle := max(after, 3*c.cfg.LongPoll)
	for t, seen := range c.timing.seen {
		if _, holds := c.timing.started[t]; !holds && now.Sub(seen) >= idle {
			out = append(out, t)
		}
	}
	slices.Sort(out)
	return out
}
