package recovery

import "github.com/gtrain/gtrain/coord/schema"

// The decisions of sync recovery, apart from the etcd and pserver calls that
// gather their inputs and carry them out (recovery.go).

// checkPservers tells whether the pservers (their steps and epochs, by index)
// and the master's stored state describe one history: every pserver at the
// same step, that step the master's or past it, and no pserver in a newer
// epoch; past it only in the master's epoch. Past it is the normal case
// after a master failover: step commits are saved in the background, so the
// pservers may have applied steps the stored state does not count yet; the
// new master commits them from the plan (Core.CatchUp). If not, the job
// rolls back to the newest complete global checkpoint at or below target,
// the lowest pserver step.
func checkPservers(steps, epochs []int64, masterStep, masterEpoch int64) (target int64, consistent bool) {
	if len(steps) == 0 {
		return 0, true
	}
	lowest := steps[0]
	consistent = true
	for i, s := range steps {
		lowest = min(lowest, s)
		sameHistory := epochs[i] == masterEpoch || (epochs[i] < masterEpoch && s == masterStep)
		consistent = consistent && s == steps[0] && s >= masterStep && sameHistory
	}
	return lowest, consistent
}

// pserverAhead returns the first pserver in a newer epoch than the master's:
// a rollback was cut short (its master died after restoring some pservers).
func pserverAhead(epochs []int64, masterEpoch int64) (index int, ahead bool) {
	for i, e := range epochs {
		if e > masterEpoch {
			return i, true
		}
	}
	return 0, false
}

// rollbackTarget resolves the step a rollback goes to: the newest complete
// global checkpoint still kept at or below requested (-1: the newest of all;
// 0, the start, always is one). exact is false when requested itself is not
// one (pservers split around a step no checkpoint covers).
func rollbackTarget(g schema.GlobalCheckpoint, requested int64) (target int64, exact bool) {
	if requested < 0 {
		return g.Step, true
	}
	for _, s := range g.Steps {
		if s <= requested {
			target = max(target, s)
		}
	}
	return target, target == requested
}

// olderTarget is the global checkpoint a rollback falls back to when target
// cannot be restored: the newest kept one below it, else the start (0);
// ok is false when target is the start already.
func olderTarget(g schema.GlobalCheckpoint, target int64) (older int64, ok bool) {
	if target <= 0 {
		return 0, false
	}
	for _, s := range g.Steps {
		if s < target {
			older = max(older, s)
		}
	}
	return older, true
}

// nextEpoch is the epoch a rollback opens: above the master's and above any
// epoch a pserver may have entered from an interrupted rollback.
func nextEpoch(masterEpoch int64, pserverEpochs []int64) int64 {
	epoch := masterEpoch
	for _, e := range pserverEpochs {
		epoch = max(epoch, e)
	}
	return epoch + 1
}

// declareGlobal returns the global checkpoint record once step has a mark of
// each of the participants (every pserver and the master), keeping the keep
// newest complete steps; ok is false when step is not newer than g or not
// complete yet. pass is the master's pass at the time.
func declareGlobal(g schema.GlobalCheckpoint, step, marks int64, participants, pass, keep int) (next schema.GlobalCheckpoint, ok bool) {
	if step <= g.Step || marks < int64(participants) {
		return g, false
	}
	kept := append(append([]int64(nil), g.Steps...), step)
	kept = kept[max(0, len(kept)-keep):]
	return schema.GlobalCheckpoint{Step: step, Pass: pass, Steps: kept}, true
}

// rolledBackGlobal is the global checkpoint record after a rollback to
// target: the steps of the abandoned history, after target, no longer count
// (their checkpoints are deleted as new ones are written).
func rolledBackGlobal(g schema.GlobalCheckpoint, target int64) schema.GlobalCheckpoint {
	var kept []int64
	for _, s := range g.Steps {
		if s <= target {
			kept = append(kept, s)
		}
	}
	return schema.GlobalCheckpoint{Step: target, Pass: g.Pass, Steps: kept}
}
