package core

import (
	"fmt"
	"time"
)

// CatchUp (sync) commits the steps from the committed one up to step (not
// included), which the pservers applied: step commits are saved in the
// background (Effects.Deferred), so a master that dies may take the last
// ones with it. Every such step is in the model exactly once, so it is
// committed here exactly once, with what the plan says its micro-batches
// hold (the records a trainer reports: samples_applied stays exact); their
// losses went with the reports, so the pass's train loss is the mean over
// the records whose loss was reported (Meta.PassLossSkipped). A step
// outside the current pass is refused with ErrBadStep: the pservers are not
// in this master's history, and the job must roll back.
func (c *Core) CatchUp(step int64, now time.Time) (Effects, error) {
	if step == c.meta.Step {
		return Effects{}, nil
	}
	if !c.cfg.Sync || c.plan == nil || c.ending || c.meta.Done || step < c.meta.Step || step > c.plan.EndStep() {
		return Effects{}, fmt.Errorf("pservers at step %d, master at step %d (pass %d): %w", step, c.meta.Step, c.meta.Pass, ErrBadStep)
	}
	from := c.meta.Step
	var eff Effects
	for c.meta.Step < step {
		s := c.meta.Step
		reports := make(map[int]stepReport, c.cfg.MicroBatches)
		for mb := range c.cfg.MicroBatches {
			reports[mb] = stepReport{records: int64(c.plan.MicroBatchRecords(s, mb)), lossUnknown: true}
		}
		c.reports[s] = reports
		if snap := c.commitStep(s, now); snap != nil {
			eff.Snapshots = append(eff.Snapshots, *snap)
		}
	}
	c.log.Warn("caught up with the pservers: steps they applied committed from the plan", "from", from, "to", step)
	eff.Changed = true
	eff.PassEnd = c.maybeEndPass()
	return eff, nil
}
