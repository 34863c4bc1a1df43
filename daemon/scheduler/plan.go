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
	jobs     []clusterJob                  // in submit order (fence)
	problems []error                       // jobs left out because a key does not decode
	quotas   map[string]schema.QuotaRecord // by user; a user without one has no limit
}

// clusterJob is one job as the scheduler sees it.
type clusterJob struct {
	name      string
	fence     int64  // create revision of the job record
	owner     string // who submitted it (its quota's user); "" before roles existed: no quota
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
// records that change. Jobs are placed by priority, highest first, and in
// submit order within a priority, each seeing the capacity that the jobs
// before it took; a job whose owner's quota it would exceed waits
// (quota.go); one that does not fit may shrink elastic jobs of lower
// priority (preempt.go). It is a pure function of its arguments: gossipDown says whether gossip declared a node dead, newToken
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
	p := &pass{view: view, requests: requests, gpus: gpus, views: views, index: index, states: states, drains: drains,
		use: quotaUsage(view.jobs, requests), taken: map[string]shrink{}, now: now, newToken: newToken}
	var updates []placementUpdate
	for _, j := range byPriority(view.jobs) {
		if api.Terminal(j.state) {
			continue
		}
		if u := p.placeOne(j); u != nil {
			updates = append(updates, *u)
		}
	}
	return updates
}

// pass is what one scheduling pass keeps while it places job after job.
type pass struct {
	view     clusterView
	requests map[string]map[string]Request // per job, per worker
	gpus     gpuPool
	views    []nodeView // the room left, falling as the pass places
	index    map[string]int
	states   map[string]api.NodeState
	drains   map[string]int64
	use      map[string]quotaUse // per user: what its placed jobs ask
	taken    map[string]shrink   // trainers preemption takes from lower-priority jobs (preempt.go)
	now      time.Time
	newToken func() string
}

// placeOne decides one job's placement; nil when its record stays as it is.
func (p *pass) placeOne(orig clusterJob) *placementUpdate {
	now, yield, yielded := yieldNow(orig, p.taken[orig.name])
	j, shrunk := orig, ""
	if now {
		j, shrunk = applyShrink(orig, p.taken[orig.name])
	}
	requests := p.requests[j.name]
	if u, waits := waitForQuota(j, p.view.quotas, p.use[j.owner], requests, p.now); waits {
		return u
	}
	hold, held := drainHolds(handoverInput{Workers: j.spec.Workers(), Current: j.placement.Nodes(), Drains: p.drains,
		Sync: j.spec.Mode == jobspec.ModeSync, Started: j.started, CheckpointRev: j.checkpointRev})
	workers := j.spec.Workers()
	if now {
		// Taken: placement must not put them back. Until then (a yield
		// waiting for the next global checkpoint) they stay where they are.
		workers = slices.DeleteFunc(workers, func(w string) bool { return slices.Contains(p.taken[j.name].trainers, w) })
	}
	in := placeInput{
		Workers:  workers,
		Requests: requests,
		Current:  j.placement.Nodes(),
		Nodes:    p.views,
		OneNode:  j.spec.Checkpoint.Dir == "",
		Home:     j.placement.Home,
		Hold:     hold,
		// A job that never ran may start with fewer trainers, down to its min.
		MinTrainers: minTrainers(&j.spec),
	}
	out := placeJob(in)
	if len(out.Placement) == 0 && len(j.placement.Workers) == 0 {
		if why := preemptFor(j, in, p.view.jobs, p.requests, p.taken); why != "" {
			out.Reason = why
		}
	}
	next, events := applyPlacement(j, out.Placement, p.states)
	if len(next.Workers) > 0 {
		next.Home = "" // back on it: Current keeps it there from now on
	}
	if shrunk != "" {
		events, next.Gen = append(events, shrunk), orig.placement.Gen+1
	}
	if next.Yield = yield; yielded != "" {
		events = append(events, yielded)
	}
	assignGPUs(&next, j.placement, j.spec.Workers(), requests, p.gpus)
	if held != "" && !strings.Contains(j.placement.Reason, held) {
		events = append(events, held)
	}
	p.take(j, next)
	next.Reason = joinReasons(out.Reason, held)
	events = append(lostNodeEvents(j.spec.Workers(), j.placement, next, p.states), events...)
	if dir := j.spec.Checkpoint.Dir; dir != "" {
		if r := advanceCheck(&next, dir, j.results, p.states, p.now, p.newToken); next.Reason == "" {
			next.Reason = r
		}
	}
	if next.Reason != j.placement.Reason && strings.HasPrefix(next.Reason, preemptReason) {
		events = append(events, next.Reason)
	}
	if samePlacement(next, orig.placement) {
		return nil
	}
	next.Updated = p.now.UTC()
	return &placementUpdate{job: j.name, fence: j.fence, record: next, events: events}
}

// take counts what a job's next placement newly asks: out of its nodes'
// room and into its owner's quota use.
func (p *pass) take(j clusterJob, next schema.PlacementRecord) {
	for w, a := range next.Workers {
		if prev, ok := j.placement.Workers[w]; !ok || prev.Node != a.Node {
			if i, ok := p.index[a.Node]; ok {
				p.views[i].Free = p.views[i].Free.minus(p.requests[j.name][w])
			}
		}
	}
	p.use[j.owner] = addUse(p.use[j.owner], j.placement, next, p.requests[j.name])
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
