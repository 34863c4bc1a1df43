package core

// Trainer liveness (async): the driver feeds the core what etcd says about
// the trainers' leases, and the core keeps the tasks of live trainers from
// timing out (see Tick). The core reads no etcd itself.

// TrainerUp records that trainer's lease is alive (its ID key exists).
func (c *Core) TrainerUp(trainer int) {
	c.live[trainer] = true
}

// TrainersLive replaces the live set with the trainers listed (the ID keys
// found when this master started watching) and gives back, without a
// failure, the tasks of every trainer not listed: a restored master's
// pending tasks whose trainer died while no master was watching.
func (c *Core) TrainersLive(trainers []int) Effects {
	clear(c.live)
	for _, t := range trainers {
		c.live[t] = true
	}
	if c.cfg.Sync {
		return Effects{}
	}
	var eff Effects
	for _, s := range c.q.Statuses() {
		if s.State != Pending || c.live[s.Trainer] {
			continue
		}
		if back := c.q.ReleaseTrainer(s.Trainer); len(back) > 0 {
			c.log.Warn("tasks of a trainer not alive at master start; re-queued", "trainer", s.Trainer, "tasks", back)
			eff.Changed = true
		}
	}
	if eff.Changed {
		eff.PassEnd = c.maybeEndPass()
	}
	return eff
}
