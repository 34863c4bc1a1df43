package scheduler

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/gtrain/gtrain/api"
	"github.com/gtrain/gtrain/coord"
	"github.com/gtrain/gtrain/coord/schema"
	"github.com/gtrain/gtrain/jobspec"
)

// clusterView is what one scheduling pass reads from etcd.
type clusterView struct {
	nodes    []coord.ClusterNode
	jobs     []clusterJob // in submit order (fence)
	problems []error      // jobs left out because a key does not decode
}

// clusterJob is one job as the scheduler sees it.
type clusterJob struct {
	name      string
	fence     int64 // create revision of the job record
	spec      jobspec.Spec
	state     api.JobState
	placement schema.PlacementRecord // zero before the first pass placed it
	results   map[string]schema.StorageResult
	// For the drain handover: the mod revision of the job's global
	// checkpoint record (0: none), and whether its master saved state.
	checkpointRev int64
	started       bool
}

// placementUpdate is a placement to write, with the events that explain it.
type placementUpdate struct {
	job    string
	fence  int64
	record schema.PlacementRecord
	events []string
}

// schedule decides every job's placement from view and returns the
// records that change. Jobs are placed in submit order, each seeing the
// capacity that the jobs before it took. It is a pure function of its
// arguments: gossipDown says whether gossip declared a node dead, newToken
// makes the token of a new storage check.
func schedule(view clusterView, gossipDown func(string) bool, now time.Time, newToken func() string) []placementUpdate {
	states := map[string]api.NodeState{}
	used := map[string]Request{}
	requests := map[string]map[string]Request{}
	for _, j := range view.jobs {
		if api.Terminal(j.state) {
			continue
		}
		requests[j.name] = Requests(&j.spec)
		for w, a := range j.placement.Workers {
			used[a.Node] = used[a.Node].Plus(requests[j.name][w])
		}
	}
	gpus := newGPUPool(view.nodes, view.jobs)
	views := make([]nodeView, 0, len(view.nodes))
	index := map[string]int{}
	drains := map[string]int64{}
	for _, n := range view.nodes {
		states[n.Name] = n.State(gossipDown)
		if states[n.Name] == api.NodeDraining {
			drains[n.Name] = n.DrainRev
		}
		capacity := n.Record.Capacity
		c := Request{CPU: capacity.CPU, Memory: capacity.Memory, GPUs: capacity.GPUs}
		index[n.Name] = len(views)
		free := c.minus(used[n.Name])
		// The free devices bound the count too, so that a worker placed
		// on the count always finds its devices, whatever the records
		// hold; both fall together as the pass places.
		free.GPUs = min(free.GPUs, gpus.free(n.Name))
		views = append(views, nodeView{Name: n.Name, State: states[n.Name], Free: free})
	}
	var updates []placementUpdate
	for _, j := range view.jobs {
		if api.Terminal(j.state) {
			continue
		}
		hold, held := drainHolds(handoverInput{Workers: j.spec.Workers(), Current: j.placement.Nodes(), Drains: drains,
			Sync: j.spec.Mode == jobspec.ModeSync, Started: j.started, CheckpointRev: j.checkpointRev})
		out := placeJob(placeInput{
			Workers:  j.spec.Workers(),
			Requests: requests[j.name],
			Current:  j.placement.Nodes(),
			Nodes:    views,
			OneNode:  j.spec.Checkpoint.Dir == "",
			Hold:     hold,
			// A job that never ran may start with fewer trainers, down to its min.
			MinTrainers: minTrainers(&j.spec),
		})
		next, events := applyPlacement(j, out.Placement, states)
		assignGPUs(&next, j.placement, j.spec.Workers(), requests[j.name], gpus)
		if held != "" && !strings.Contains(j.placement.Reason, held) {
			events = append(events, held)
		}
		for w, a := range next.Workers {
			if prev, ok := j.placement.Workers[w]; !ok || prev.Node != a.Node {
				if i, ok := index[a.Node]; ok {
					views[i].Free = views[i].Free.minus(requests[j.name][w])
				}
			}
		}
		next.Reason = joinReasons(out.Reason, held)
		events = append(lostNodeEvents(j.spec.Workers(), j.placement, next, states), events...)
		if dir := j.spec.Checkpoint.Dir; dir != "" {
			if r := advanceCheck(&next, dir, j.results, states, now, newToken); next.Reason == "" {
				next.Reason = r
			}
		}
		if !samePlacement(next, j.placement) {
			next.Updated = now.UTC()
			updates = append(updates, placementUpdate{job: j.name, fence: j.fence, record: next, events: events})
		}
	}
	return updates
}

// applyPlacement turns the decided worker -> node map into the job's next
// record: a worker whose node changes gets a new assignment of the next
// generation. It also says, as events, what moved and why.
func applyPlacement(j clusterJob, placed map[string]string, states map[string]api.NodeState) (schema.PlacementRecord, []string) {
	prev := j.placement
	next := prev
	next.Workers = maps.Clone(prev.Workers)
	if next.Workers == nil {
		next.Workers = map[string]schema.Assignment{}
	}
	next.Verified = slices.Clone(prev.Verified)
	if prev.Check != nil {
		c := *prev.Check
		next.Check = &c
	}
	gen := prev.Gen + 1
	var events, fresh []string
	for _, w := range j.spec.Workers() {
		old, had := prev.Workers[w]
		node, ok := placed[w]
		switch {
		case !ok && had:
			delete(next.Workers, w)
			events = append(events, fmt.Sprintf("%s lost its node %s (%s) and waits for room elsewhere", w, old.Node, states[old.Node]))
		case !ok || (had && old.Node == node):
		case had:
			next.Workers[w] = schema.Assignment{Node: node, Gen: gen}
			events = append(events, fmt.Sprintf("%s moved from %s (%s) to %s", w, old.Node, states[old.Node], node))
		default:
			next.Workers[w] = schema.Assignment{Node: node, Gen: gen}
			fresh = append(fresh, w+" on "+node)
		}
	}
	if len(fresh) > 0 {
		events = append(events, "placed "+strings.Join(fresh, ", "))
	}
	events = append(events, dropScaledDown(j, next.Workers)...)
	if len(events) > 0 {
		next.Gen = gen
	}
	return next, events
}

// samePlacement compares two records but for their Updated time.
func samePlacement(a, b schema.PlacementRecord) bool {
	a.Updated, b.Updated = time.Time{}, time.Time{}
	if len(a.Workers) == 0 {
		a.Workers = nil
	}
	if len(b.Workers) == 0 {
		b.Workers = nil
	}
	return coord.MustJSON(a) == coord.MustJSON(b)
}

// joinReasons joins the non-empty reasons with "; ".
func joinReasons(reasons ...string) string {
	return strings.Join(slices.DeleteFunc(reasons, func(r string) bool { return r == "" }), "; ")
}
