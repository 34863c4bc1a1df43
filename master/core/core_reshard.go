package core

// CheckpointNext (sync) makes the next step whose checkpoint flag is not
// decided yet a checkpoint step: a re-shard needs a global checkpoint soon,
// not at the spec's next interval. Steps already handed out keep their flag
// (every trainer of a step must carry the same one).
func (c *Core) CheckpointNext() { c.checkpointNext = true }
