package scheduler

import (
	"fmt"

	"github.com/gtrain/gtrain/api"
	"github.com/gtrain/gtrain/jobspec"
)

// Elastic placement: a job whose trainers do not all fit runs with what
// fits, as long as that is at least its trainers' min (docs/reference.md#job-spec); it grows
// when room appears, as the scheduler places the missing trainers on every
// pass. Below min it waits, PENDING, with the reason.

// runsWithFewer reports whether a job none of whose workers ran before may
// start with the workers placed: every worker left out is a trainer, and
// at least MinTrainers trainers are placed.
func runsWithFewer(in placeInput, placed map[string]string, failed []string) bool {
	fit, onlyTrainers := trainersPlaced(placed, failed)
	return in.MinTrainers >= 1 && onlyTrainers && fit >= in.MinTrainers
}

// trainersPlaced counts the trainers placed and reports whether every
// worker left out is a trainer.
func trainersPlaced(placed map[string]string, failed []string) (fit int, onlyTrainers bool) {
	for _, w := range failed {
		if roleOf(w) != jobspec.RoleTrainer {
			return 0, false
		}
	}
	for w := range placed {
		if roleOf(w) == jobspec.RoleTrainer {
			fit++
		}
	}
	return fit, true
}

// onOneNodeWithFewer places a new one-node job whose whole does not fit on
// any ready node with as many trainers as fit, at least MinTrainers: the
// trainers left out are named in the reason. ok is false when the whole job
// fits (the caller places it) or not even MinTrainers do.
func onOneNodeWithFewer(in placeInput, nodes []nodeView) (placeOutput, bool) {
	if in.MinTrainers < 1 {
		return placeOutput{}, false
	}
	var base Request
	var trainers []string
	for _, w := range in.Workers {
		if roleOf(w) == jobspec.RoleTrainer {
			trainers = append(trainers, w)
		} else {
			base = base.Plus(in.Requests[w])
		}
	}
	fitting := func(k int) *nodeView {
		total := base
		for _, w := range trainers[:k] {
			total = total.Plus(in.Requests[w])
		}
		var best *nodeView
		for i := range nodes {
			n := &nodes[i]
			if n.State == api.NodeReady && total.fits(n.Free) && (best == nil || n.Free.CPU > best.Free.CPU) {
				best = n
			}
		}
		return best
	}
	if fitting(len(trainers)) != nil {
		return placeOutput{}, false
	}
	for k := len(trainers) - 1; k >= in.MinTrainers; k-- {
		n := fitting(k)
		if n == nil {
			continue
		}
		out := placeOutput{Placement: map[string]string{}}
		for _, w := range in.Workers {
			if roleOf(w) != jobspec.RoleTrainer {
				out.Placement[w] = n.Name
			}
		}
		for _, w := range trainers[:k] {
			out.Placement[w] = n.Name
		}
		out.Reason = fmt.Sprintf("runs with %d of %d trainers: node %s has no room for more (min %d)", k, len(trainers), n.Name, in.MinTrainers)
		return out, true
	}
	return placeOutput{}, false
}

// trainersFitReason opens the reason of a new job some of whose trainers
// do not fit, so that an operator sees where it stands against its min:
// "waits: 2 of 4 trainers fit, min 3; " or "runs with 3 of 4 trainers
// (min 3); ". Empty when something else than trainers is missing or the
// job has no min.
func trainersFitReason(in placeInput, placed map[string]string, failed []string) string {
	fit, onlyTrainers := trainersPlaced(placed, failed)
	switch {
	case in.MinTrainers < 1 || !onlyTrainers:
		return ""
	case fit < in.MinTrainers:
		return fmt.Sprintf("waits: %d of %d trainers fit, min %d; ", fit, fit+len(failed), in.MinTrainers)
	}
	return fmt.Sprintf("runs with %d of %d trainers (min %d); ", fit, fit+len(failed), in.MinTrainers)
}

// minTrainers is the trainers' min of spec.
func minTrainers(spec *jobspec.Spec) int {
	lo, _ := spec.TrainerBounds()
	return lo
}
