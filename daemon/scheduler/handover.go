package scheduler

import (
	"fmt"
	"slices"
	"strings"
)

// handoverInput is what decides whether a job's workers may leave the
// draining nodes they run on now.
type handoverInput struct {
	Workers []string          // in spec order
	Current map[string]string // worker -> node where the job runs it now
	// Drains holds the nodes that are draining (and not down), each with
	// the etcd create revision of its drain mark.
	Drains map[string]int64
	Sync   bool // the job's pservers step in lockstep (mode sync)
	// Started: the job's master has saved its state, so there are steps
	// a move could lose.
	Started bool
	// CheckpointRev is the etcd mod revision of the job's global
	// checkpoint record; 0 when none was ever written.
	CheckpointRev int64
}

// drainHolds decides which workers stay on their draining node for now,
// and says why. A moved pserver of a sync job restarts from the newest
// complete global checkpoint and the job rolls back to it, so its workers
// leave a draining node only once a checkpoint completed after the drain
// began: then the steps redone are only those of the moments since. An
// async job loses nothing it must redo, and a job whose master has not
// started has no step to lose: they move at once. It is a pure function.
func drainHolds(in handoverInput) (map[string]bool, string) {
	if !in.Sync || !in.Started {
		return nil, ""
	}
	hold := map[string]bool{}
	byNode := map[string][]string{}
	var nodes []string
	for _, w := range in.Workers {
		node := in.Current[w]
		since, draining := in.Drains[node]
		if !draining || in.CheckpointRev > since {
			continue
		}
		hold[w] = true
		if byNode[node] == nil {
			nodes = append(nodes, node)
		}
		byNode[node] = append(byNode[node], w)
	}
	if len(hold) == 0 {
		return nil, ""
	}
	slices.Sort(nodes)
	parts := make([]string, 0, len(nodes))
	for _, n := range nodes {
		parts = append(parts, fmt.Sprintf("waiting for a global checkpoint to hand over %s from draining node %s",
			strings.Join(byNode[n], ", "), n))
	}
	return hold, strings.Join(parts, "; ")
}
