package scheduler

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/gtrain/gtrain/api"
	"github.com/gtrain/gtrain/jobspec"
)

// The master's request: the job spec states none for it (docs/reference.md#job-spec has
// resources.trainer and resources.pserver only). It hands out tasks and
// evaluates the model after each pass, so it asks for a tenth of a CPU and
// 64 MiB plus a copy of the parameters.
const (
	masterCPU        = 0.1
	masterBaseMemory = 64 << 20
)

// cpuSlack absorbs float rounding when requests add up to a capacity
// exactly (10 × 0.1 CPU on a 1-CPU node).
const cpuSlack = 1e-9

// Request is what one worker asks of its node, or what a node has free.
type Request struct {
	CPU    float64
	Memory int64 // bytes
	GPUs   int
}

func (r Request) Plus(o Request) Request {
	return Request{CPU: r.CPU + o.CPU, Memory: r.Memory + o.Memory, GPUs: r.GPUs + o.GPUs}
}

func (r Request) minus(o Request) Request {
	return Request{CPU: r.CPU - o.CPU, Memory: r.Memory - o.Memory, GPUs: r.GPUs - o.GPUs}
}

// fits reports whether r can be taken out of free.
func (r Request) fits(free Request) bool {
	return r.CPU <= free.CPU+cpuSlack && r.Memory <= free.Memory && r.GPUs <= free.GPUs
}

// describe names the dimensions r asks for ("1 cpu, 512Mi"), rounded up to
// a hundredth of a CPU; "" when none.
func (r Request) describe() string {
	var parts []string
	if r.CPU > 0 {
		parts = append(parts, formatCPU(math.Ceil(r.CPU*100-cpuSlack)/100)+" cpu")
	}
	if r.Memory > 0 {
		parts = append(parts, jobspec.FormatMemory(r.Memory))
	}
	if r.GPUs > 0 {
		parts = append(parts, strconv.Itoa(r.GPUs)+" gpu")
	}
	return strings.Join(parts, ", ")
}

// formatCPU writes a CPU count as people do: "1", "0.5".
func formatCPU(cpu float64) string { return strconv.FormatFloat(cpu, 'f', -1, 64) }

// freeOf describes free in the dimensions that asked requests ("0.5 cpu"),
// rounded down to a hundredth of a CPU.
func freeOf(free, asked Request) string {
	var parts []string
	if asked.CPU > 0 {
		parts = append(parts, formatCPU(math.Floor(max(free.CPU, 0)*100+cpuSlack)/100)+" cpu")
	}
	if asked.Memory > 0 {
		parts = append(parts, jobspec.FormatMemory(max(free.Memory, 0)))
	}
	if asked.GPUs > 0 {
		parts = append(parts, strconv.Itoa(max(free.GPUs, 0))+" gpu")
	}
	return strings.Join(parts, ", ")
}

// Requests is each worker's request: the spec's resources, with an
// unstated memory replaced by what the parameters need (MemoryNeed), and
// the master's defaults. spec must be valid.
func Requests(spec *jobspec.Spec) map[string]Request {
	need, _ := spec.MemoryNeed() // a valid spec's model is valid
	memory := func(r jobspec.Resource, needed int64) int64 {
		if stated, err := r.MemoryBytes(); err == nil && stated > 0 {
			return stated
		}
		return needed
	}
	pserver := Request{CPU: spec.Resources.Pserver.CPU, Memory: memory(spec.Resources.Pserver, need.Pserver), GPUs: spec.Resources.Pserver.GPU}
	trainer := Request{CPU: spec.Resources.Trainer.CPU, Memory: memory(spec.Resources.Trainer, need.Trainer), GPUs: spec.Resources.Trainer.GPU}
	out := map[string]Request{
		jobspec.MasterName: {CPU: masterCPU, Memory: min(need.Master, math.MaxInt64-masterBaseMemory) + masterBaseMemory},
	}
	for i := range spec.Pservers {
		out[jobspec.PserverName(i)] = pserver
	}
	for i := range spec.Trainers {
		out[jobspec.TrainerName(i)] = trainer
	}
	return out
}

// nodeView is a node as one placement sees it.
type nodeView struct {
	Name  string
	State api.NodeState // only ready nodes take workers
	Free  Request       // capacity minus the requests of every worker placed there
}

// placeInput is one job's placement problem.
type placeInput struct {
	Workers  []string           // in spec order: master, pservers, trainers
	Requests map[string]Request // per worker
	Current  map[string]string  // worker -> node where the job runs it now
	Nodes    []nodeView
	// OneNode: the job keeps its checkpoints on the local disk of its node
	// (no checkpoint.dir), so all its workers go on one node and stay there.
	OneNode bool
	// Home: the node a OneNode job none of whose workers is placed must go
	// to, its checkpoints' (a resumed job); "" for any node.
	Home string
	// Hold names workers that stay on their node while it drains: they
	// wait to hand over at a global checkpoint (drainHolds).
	Hold map[string]bool
	// MinTrainers: a job may run with fewer trainers than it names, down
	// to this many, when the rest do not fit (mintrainers.go); 0: all.
	MinTrainers int
}

// placeOutput is the placement decided: Placement holds every worker
// placed (kept or new); Reason says what is short, and where, for those
// left out ("" when none is).
type placeOutput struct {
	Placement map[string]string
	Reason    string
}

// placeJob decides where a job's workers run. It is a pure function of its
// input. A worker stays where it runs while that node is ready (or
// drains, when in.Hold holds it there); the others
// go, in spec order, to the ready node with room for their request that
// holds the fewest workers of the job in the same role, then the fewest of
// the job, then has the most free CPU, then the most free memory, then
// sorts first by name: pservers and trainers spread over the nodes. A job
// none of whose workers can stay is placed whole or not at all, so that a
// job that cannot run holds no capacity.
func placeJob(in placeInput) placeOutput {
	nodes := slices.Clone(in.Nodes)
	slices.SortFunc(nodes, func(a, b nodeView) int { return strings.Compare(a.Name, b.Name) })
	if in.OneNode {
		return placeOnOneNode(in, nodes)
	}
	byName := map[string]*nodeView{}
	for i := range nodes {
		byName[nodes[i].Name] = &nodes[i]
	}
	out := placeOutput{Placement: map[string]string{}}
	sameRole, ofJob := map[string]int{}, map[string]int{}
	for _, w := range in.Workers {
		n := byName[in.Current[w]]
		if n != nil && (n.State == api.NodeReady || (n.State == api.NodeDraining && in.Hold[w])) {
			out.Placement[w] = n.Name
			sameRole[roleOf(w)+"@"+n.Name]++
			ofJob[n.Name]++
		}
	}
	kept := len(out.Placement)
	initial := slices.Clone(nodes)
	var failed []string
	var gpuShort string
	for _, w := range in.Workers {
		if _, ok := out.Placement[w]; ok {
			continue
		}
		req := in.Requests[w]
		var best *nodeView
		for i := range nodes {
			n := &nodes[i]
			if n.State != api.NodeReady || !req.fits(n.Free) {
				continue
			}
			if best == nil || spreadOrder(n, best, sameRole, ofJob, roleOf(w)) < 0 {
				best = n
			}
		}
		if best == nil {
			failed = append(failed, w)
			if gpuShort == "" {
				gpuShort = noFreeGPU(w, req, nodes)
			}
			continue
		}
		out.Placement[w] = best.Name
		best.Free = best.Free.minus(req)
		sameRole[roleOf(w)+"@"+best.Name]++
		ofJob[best.Name]++
	}
	if len(failed) > 0 {
		out.Reason = gpuShort + shortReason(failed, in.Requests, initial)
		if kept == 0 {
			out.Reason = trainersFitReason(in, out.Placement, failed) + out.Reason
			if !runsWithFewer(in, out.Placement, failed) {
				out.Placement = map[string]string{}
			}
		}
	}
	return out
}

// spreadOrder compares two candidate nodes for a worker of role: < 0 when
// a is the better one.
func spreadOrder(a, b *nodeView, sameRole, ofJob map[string]int, role string) int {
	return cmp.Or(
		cmp.Compare(sameRole[role+"@"+a.Name], sameRole[role+"@"+b.Name]),
		cmp.Compare(ofJob[a.Name], ofJob[b.Name]),
		cmp.Compare(b.Free.CPU, a.Free.CPU),
		cmp.Compare(b.Free.Memory, a.Free.Memory),
		strings.Compare(a.Name, b.Name),
	)
}

// placeOnOneNode keeps a job without shared checkpoints on the node it
// runs on, whatever that node's state, and places a new one whole on the
// ready node with the most free CPU (then memory, then name) that has room.
func placeOnOneNode(in placeInput, nodes []nodeView) placeOutput {
	if len(in.Current) > 0 {
		return keepOnItsNode(in, nodes)
	}
	if in.Home != "" {
		nodes = slices.DeleteFunc(slices.Clone(nodes), func(n nodeView) bool { return n.Name != in.Home })
	}
	if fewer, ok := onOneNodeWithFewer(in, nodes); ok {
		return fewer
	}
	var total Request
	for _, w := range in.Workers {
		total = total.Plus(in.Requests[w])
	}
	var best *nodeView
	for i := range nodes {
		n := &nodes[i]
		if n.State != api.NodeReady || !total.fits(n.Free) {
			continue
		}
		if best == nil || cmp.Or(cmp.Compare(n.Free.CPU, best.Free.CPU), cmp.Compare(n.Free.Memory, best.Free.Memory)) > 0 {
			best = n
		}
	}
	if best == nil {
		what := total.describe()
		if what == "" {
			what = "a ready node"
		}
		where := "one node"
		if in.Home != "" {
			where = in.Home + ", whose disk holds its checkpoints,"
		}
		return placeOutput{Placement: map[string]string{}, Reason: noFreeGPU("the whole job", total, nodes) + fmt.Sprintf(
			"needs %s on %s for the whole job (without checkpoint.dir its checkpoints stay on one node's disk, so it cannot span nodes); %s",
			what, where, nodesReport(nodes, total))}
	}
	out := placeOutput{Placement: map[string]string{}}
	for _, w := range in.Workers {
		out.Placement[w] = best.Name
	}
	return out
}

// keepOnItsNode is placeOnOneNode for a job that already runs: it stays.
func keepOnItsNode(in placeInput, nodes []nodeView) placeOutput {
	out := placeOutput{Placement: maps.Clone(in.Current)}
	var home string
	for _, w := range in.Workers {
		if n := in.Current[w]; n != "" {
			home = n
			break
		}
	}
	state := api.NodeDown // a node nobody lists any more is gone
	var free Request
	var homeView []nodeView
	for _, n := range nodes {
		if n.Name == home {
			state, free, homeView = n.State, n.Free, []nodeView{n}
		}
	}
	why := fmt.Sprintf("its checkpoints are on %s's local disk (checkpoint.dir is not set)", home)
	switch state {
	case api.NodeDown:
		out.Reason = fmt.Sprintf("waiting for node %s (down): %s, so it can run nowhere else; "+
			"give jobs that must survive a node a checkpoint.dir on shared storage", home, why)
	case api.NodeDraining:
		out.Reason = fmt.Sprintf("cannot move off draining node %s: %s; it stays there until it ends", home, why)
	}
	// A worker missing from an old placement (a trainer scaled up, or one
	// given up to a job of higher priority) joins the others when it fits.
	var short []string
	for _, w := range in.Workers {
		if _, ok := out.Placement[w]; ok || state != api.NodeReady {
			continue
		}
		if req := in.Requests[w]; req.fits(free) {
			out.Placement[w], free = home, free.minus(req)
		} else {
			short = append(short, w)
		}
	}
	if len(short) > 0 && out.Reason == "" {
		out.Reason = shortReason(short, in.Requests, homeView)
	}
	return out
}

// shortReason says what the failed workers need and what the nodes have:
// "needs 3 cpu for 3 trainers (1 cpu each); free: n1 0.5 cpu, n2 1 cpu".
func shortReason(failed []string, requests map[string]Request, nodes []nodeView) string {
	type roleNeed struct {
		n          int
		each, sum  Request
		name, noun string
	}
	var roles []*roleNeed
	byRole := map[string]*roleNeed{}
	var asked Request
	for _, w := range failed {
		role := roleOf(w)
		r := byRole[role]
		if r == nil {
			r = &roleNeed{each: requests[w], name: role}
			byRole[role] = r
			roles = append(roles, r)
		}
		r.n++
		r.sum = r.sum.Plus(requests[w])
		asked = asked.Plus(requests[w])
	}
	parts := make([]string, 0, len(roles))
	for _, r := range roles {
		noun := r.name
		if r.n > 1 {
			noun = fmt.Sprintf("%d %ss", r.n, r.name)
		}
		if what := r.sum.describe(); what != "" {
			parts = append(parts, fmt.Sprintf("%s for %s (%s each)", what, noun, r.each.describe()))
		} else {
			parts = append(parts, "a ready node for "+noun)
		}
	}
	return "needs " + strings.Join(parts, " and ") + "; " + nodesReport(nodes, asked)
}

// nodesReport lists what each node has free in the dimensions asked, and
// the nodes that take no work: "free: n1 0.5 cpu, n2 1 cpu; n3 down".
func nodesReport(nodes []nodeView, asked Request) string {
	if len(nodes) == 0 {
		return "no node has registered: start an agent (gtraind agent)"
	}
	var free, idle []string
	for _, n := range nodes {
		switch {
		case n.State != api.NodeReady:
			idle = append(idle, fmt.Sprintf("%s %s", n.Name, n.State))
		case asked.describe() == "":
			free = append(free, n.Name)
		default:
			free = append(free, fmt.Sprintf("%s %s", n.Name, freeOf(n.Free, asked)))
		}
	}
	var out []string
	if len(free) > 0 {
		out = append(out, "free: "+strings.Join(free, ", "))
	} else {
		out = append(out, "no node is ready")
	}
	return strings.Join(append(out, idle...), "; ")
}

// roleOf is the role of a worker name: master, pserver or trainer.
func roleOf(worker string) string {
	role, _, err := jobspec.ParseWorker(worker)
	if err != nil {
		return worker
	}
	return role
}
