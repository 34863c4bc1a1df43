package scheduler

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/gtrain/gtrain/api"
	"github.com/gtrain/gtrain/coord/schema"
	"github.com/gtrain/gtrain/jobspec"
)

// Preemption: a job that does not fit may take room from running elastic
// jobs of lower priority, never below their trainers' min and never
// stopping one whole. A sync job that has started gives its trainers up at
// its next global checkpoint: the pass that decides it records them in its
// placement (Yield), and the first pass that sees a global checkpoint
// recorded since unplaces them; a job that has not started, or an async
// one, gives them up at once. They go, the highest-numbered first, as
// `gctl job scale` lowering the count does (scaledown.go): their
// supervisors stop them and the master hands their unfinished
// micro-batches to the others, so the model is the one a fixed count would
// give. The next pass places the job of higher priority in the room freed
// (it is placed before them); the shrunk jobs grow back, as elastic jobs
// do, when room appears again. Both sides get events that say why.

// shrink is what one job gives up: its trainers to unplace, and for whom.
type shrink struct {
	trainers []string
	why      string
}

// planPreemption finds the trainers of lower-priority elastic jobs whose
// room lets job hi be placed: in.Nodes is the room the pass has left,
// and taken what earlier decisions of the pass already unplace. It takes
// from the lowest priority first, then the latest submitted, one trainer
// at a time, and stops as soon as hi fits; ok is false (and nothing
// taken) when even every trainer above its job's min would not be enough.
func planPreemption(hi clusterJob, in placeInput, jobs []clusterJob, requests map[string]map[string]Request, taken map[string]shrink) (map[string][]string, bool) {
	nodes := slices.Clone(in.Nodes)
	index := map[string]int{}
	for i, n := range nodes {
		index[n.Name] = i
	}
	drops := map[string][]string{}
	for _, lo := range preemptible(hi, jobs, taken) {
		for _, w := range lo.spare {
			if i, ok := index[lo.job.placement.Workers[w].Node]; ok {
				nodes[i].Free = nodes[i].Free.Plus(requests[lo.job.name][w])
			}
			drops[lo.job.name] = append(drops[lo.job.name], w)
			in.Nodes = nodes
			if out := placeJob(in); len(out.Placement) > 0 {
				return drops, true
			}
		}
	}
	return nil, false
}

// victim is a job that may give up spare, its trainers above its min
// (highest-numbered first).
type victim struct {
	job   clusterJob
	spare []string
}

// preemptible are the placed jobs of lower priority than hi with trainers
// above their min, lowest priority first, then the latest submitted.
func preemptible(hi clusterJob, jobs []clusterJob, taken map[string]shrink) []victim {
	var out []victim
	for _, j := range jobs {
		if api.Terminal(j.state) || j.spec.Priority >= hi.spec.Priority || len(j.placement.Workers) == 0 {
			continue
		}
		var placed []string
		for w := range j.placement.Workers {
			if roleOf(w) == jobspec.RoleTrainer && !slices.Contains(taken[j.name].trainers, w) {
				placed = append(placed, w)
			}
		}
		slices.SortFunc(placed, func(a, b string) int { return cmp.Compare(trainerIndex(b), trainerIndex(a)) })
		if n := len(placed) - minTrainers(&j.spec); n > 0 {
			out = append(out, victim{job: j, spare: placed[:n]})
		}
	}
	slices.SortStableFunc(out, func(a, b victim) int {
		return cmp.Or(cmp.Compare(a.job.spec.Priority, b.job.spec.Priority), cmp.Compare(b.job.fence, a.job.fence))
	})
	return out
}

// trainerIndex is N of trainer-N.
func trainerIndex(w string) int {
	_, i, _ := jobspec.ParseWorker(w)
	return i
}

// preemptFor records in taken the shrinks that let hi be placed, and
// answers hi's reason and event; "" when no shrink helps.
func preemptFor(hi clusterJob, in placeInput, jobs []clusterJob, requests map[string]map[string]Request, taken map[string]shrink) string {
	drops, ok := planPreemption(hi, in, jobs, requests, taken)
	if !ok {
		return ""
	}
	names := slices.Sorted(maps.Keys(drops))
	parts := make([]string, 0, len(names))
	for _, job := range names {
		s := taken[job]
		s.trainers = append(s.trainers, drops[job]...)
		s.why = fmt.Sprintf("job %s (priority %d) does not fit", hi.name, hi.spec.Priority)
		taken[job] = s
		parts = append(parts, fmt.Sprintf("%s (%s)", job, strings.Join(drops[job], ", ")))
	}
	return preemptReason + strings.Join(parts, "; ")
}

// preemptReason opens the reason of a job that waits for a preemption.
const preemptReason = "waits for room: shrinking lower-priority elastic jobs toward their min: "

// yieldNow decides when job j gives up the trainers s takes: now, or
// (the Yield to keep in its placement) at its next global checkpoint.
// yielded is the event of a yield decided by this pass ("" otherwise).
func yieldNow(j clusterJob, s shrink) (now bool, y *schema.Yield, yielded string) {
	if len(s.trainers) == 0 {
		return false, nil, ""
	}
	if j.spec.Mode != jobspec.ModeSync || !j.started {
		return true, nil, ""
	}
	if y := j.placement.Yield; y != nil && slices.Equal(y.Trainers, s.trainers) {
		if j.checkpointRev > y.After {
			return true, nil, ""
		}
		return false, y, ""
	}
	y = &schema.Yield{Trainers: s.trainers, For: s.why, After: j.checkpointRev}
	return false, y, fmt.Sprintf("%s will stop at the next global checkpoint for higher priority: %s", strings.Join(s.trainers, ", "), s.why)
}

// applyShrink unplaces the trainers a preemption took from job j and says
// so: j's placement without them, and the event.
func applyShrink(j clusterJob, s shrink) (clusterJob, string) {
	if len(s.trainers) == 0 {
		return j, ""
	}
	p := j.placement
	p.Workers = maps.Clone(p.Workers)
	for _, w := range s.trainers {
		delete(p.Workers, w)
	}
	j.placement = p
	trainers := 0
	for w := range p.Workers {
		if roleOf(w) == jobspec.RoleTrainer {
			trainers++
		}
	}
	return j, fmt.Sprintf("stopped %s: shrunk to %d trainers (min %d) for higher priority: %s; it grows back when room appears",
		strings.Join(s.trainers, ", "), trainers, minTrainers(&j.spec), s.why)
}
