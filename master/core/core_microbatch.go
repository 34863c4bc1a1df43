package core

import (
	"fmt"
	"slices"
	"time"
)

// Micro-batches (sync). A step is MicroBatches micro-batches of the plan,
// fixed by the global batch; which trainer computes which one is the core's
// choice, made when a trainer asks (handOut) and forgotten when the step
// commits: any live trainer may compute any micro-batch, a trainer may do
// several, and the pservers sum them in micro-batch order whoever computed
// them, so the choice never reaches the model. It is not saved: a new master
// hands the uncommitted micro-batches out again, and a repeat is harmless
// (the pservers and the core keep the first result of a micro-batch).

// handOut chooses what trainer computes next, looking at the committed step
// and the one after it, in order (whatever step the trainer asked for: a
// micro-batch of the committed step given back by a lost trainer must be
// taken by whoever asks next, even when its holder pushed it and died before
// reporting it, so the asker is one step ahead): first a micro-batch it holds and has not reported (an answer it
// lost, or a restart under the same ID), then its home micro-batch (its own
// ID, so a job with as many trainers as micro-batches computes exactly what
// it did before micro-batches), then the lowest one held by nobody; with
// none left, a straggler's (core_straggler.go).
func (c *Core) handOut(trainer int, now time.Time) (step int64, mb int, ok bool) {
	for s := c.meta.Step; s <= c.meta.Step+1 && c.plan.Contains(s); s++ {
		if mb, ok := c.pickMicroBatch(trainer, s); ok {
			if c.assigned[s] == nil {
				c.assigned[s] = map[int]int{}
			}
			c.assigned[s][mb] = trainer
			c.timing.noteHandOut(trainer, s, mb, now)
			return s, mb, true
		}
		// The next step cannot be applied before this one: a straggler's
		// micro-batch of this one comes first.
		if mb, ok := c.straggling(trainer, now); ok && s == c.meta.Step {
			return s, mb, true
		}
	}
	return 0, 0, false
}

// pickMicroBatch is handOut's choice within step s.
func (c *Core) pickMicroBatch(trainer int, s int64) (int, bool) {
	held, done := c.assigned[s], c.reports[s]
	open := func(mb int) bool { _, reported := done[mb]; return !reported }
	for mb := range c.cfg.MicroBatches {
		if t, ok := held[mb]; ok && t == trainer && open(mb) {
			return mb, true
		}
	}
	if trainer < c.cfg.MicroBatches {
		if _, taken := held[trainer]; !taken && open(trainer) {
			return trainer, true
		}
	}
	for mb := range c.cfg.MicroBatches {
		if _, taken := held[mb]; !taken && open(mb) {
			return mb, true
		}
	}
	return 0, false
}

// releaseTrainer gives back the micro-batches trainer holds and has not
// reported, for the other trainers to take; it reports whether it held any.
func (c *Core) releaseTrainer(trainer int) bool {
	released := false
	for s, held := range c.assigned {
		for mb, t := range held {
			if _, reported := c.reports[s][mb]; t == trainer && !reported {
				delete(held, mb)
				released = true
			}
		}
	}
	return released
}

// othersCover reports whether every micro-batch of step s but mb is
// reported, held by a trainer other than trainer, or the home of another
// live trainer (who takes it when it asks): then nothing of s waits for
// trainer to ask again, and its push may wait for s to be applied. It is a
// hint; a wrong one costs the push a bounded wait, never a result.
func (c *Core) othersCover(trainer int, s int64, mb int) bool {
	held, done := c.assigned[s], c.reports[s]
	for other := range c.cfg.MicroBatches {
		if other == mb {
			continue
		}
		if _, reported := done[other]; reported {
			continue
		}
		if t, ok := held[other]; ok {
			if t == trainer {
				return false
			}
			continue
		}
		if other == trainer || !c.live[other] {
			return false
		}
	}
	return true
}

// holdersOf lists the trainers holding an unreported micro-batch of step s.
func (c *Core) holdersOf(s int64) []int {
	var out []int
	for mb, t := range c.assigned[s] {
		if _, reported := c.reports[s][mb]; !reported && !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	slices.Sort(out)
	return out
}

// checkMicroBatch refuses a micro-batch index outside the step.
func (c *Core) checkMicroBatch(mb int) error {
	if mb < 0 || mb >= c.cfg.MicroBatches {
		return fmt.Errorf("micro-batch %d of %d: %w", mb, c.cfg.MicroBatches, ErrBadStep)
	}
	return nil
}
