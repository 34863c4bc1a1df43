package controlapi

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.etcd.io/etcd/api/v3/mvccpb"

	"github.com/gtrain/gtrain/api"
	"github.com/gtrain/gtrain/coord"
	"github.com/gtrain/gtrain/coord/schema"
	"github.com/gtrain/gtrain/daemon/scheduler"
	"github.com/gtrain/gtrain/daemon/supervisor"
	"github.com/gtrain/gtrain/jobspec"
)

// maxEvents is how many of a job's newest events its status shows.
const maxEvents = 200

// jobSnapshot is everything under one job's prefix, decoded (its
// Record's Placement filled from Placement), and its history when read.
type jobSnapshot struct {
	*coord.JobView
	history []api.PassHistory // read apart (see readHistory); nil: not read
}

// snapshotJobs decodes the key-values read under coord.JobsPrefix (or one
// JobPrefix) by job. A key that does not decode fails it, naming the key.
func snapshotJobs(kvs []*mvccpb.KeyValue) (map[string]*jobSnapshot, error) {
	views, errs := coord.DecodeJobs(kvs)
	if len(errs) > 0 {
		return nil, errs[0]
	}
	jobs := make(map[string]*jobSnapshot, len(views))
	for _, v := range views {
		if v.Record != nil && v.Placement != nil {
			v.Record.Placement = v.Placement.Nodes()
		}
		jobs[v.Name] = &jobSnapshot{JobView: v}
	}
	return jobs, nil
}

// workerView is a worker as shown, never claiming more than is known: its
// record; "pending" on the node it is placed on when it has no record yet,
// or only one left by an earlier placement (it is moving there); "lost"
// when its record says it is alive on a node that is down; "exiting" when
// its job ended and its process has not yet.
func (s *jobSnapshot) workerView(worker string, nodeDown func(string) bool) schema.WorkerRecord {
	w, ok := s.Workers[worker]
	var placed schema.Assignment
	if s.Placement != nil {
		placed = s.Placement.Workers[worker]
	}
	moving := !api.Terminal(s.State.State) && ok && w.Gen < placed.Gen
	if !ok || moving {
		return schema.WorkerRecord{Name: worker, Node: placed.Node, State: api.WorkerPending, Restarts: w.Restarts}
	}
	if w.Name == "" {
		w.Name = worker
	}
	if w.State.Active() && nodeDown(w.Node) {
		w.State = api.WorkerLost
	}
	if w.State.Active() && api.Terminal(s.State.State) {
		w.State = api.WorkerExiting
	}
	if s.hungReason(w) != "" {
		w.State = api.WorkerHung
	}
	return w
}

// reason is why the job is where it is: the state's reason (why it
// failed), else, while it has not ended, why the scheduler cannot place
// or start (all of) it.
func (s *jobSnapshot) reason() string {
	switch {
	case s.State.Reason != "" || api.Terminal(s.State.State):
		return s.State.Reason
	case s.Placement == nil && s.State.State == api.StatePending:
		return "waiting for the scheduler to place it"
	case s.Placement != nil:
		return s.Placement.Reason
	}
	return ""
}

// jobStatus is the document of `gctl job status` (docs/reference.md#job-status-json) at now. s.Record
// must be set; nodeDown says whether a node is down.
func jobStatus(s *jobSnapshot, nodeDown func(string) bool, now time.Time) api.JobStatus {
	spec := s.Record.Spec
	budget := supervisor.BudgetOf(spec.Restarts)
	st := api.JobStatus{
		Name:           s.Name,
		State:          s.State.State,
		Reason:         s.reason(),
		Mode:           string(spec.Mode),
		Passes:         spec.Passes,
		SamplesApplied: []int64{},
		Trainers:       make([]api.TrainerStatus, 0, spec.Trainers),
		Pservers:       make([]api.PserverStatus, 0, spec.Pservers),
		Created:        s.Record.Created,
		Owner:          owner(s.Record.Submitter),
		Priority:       spec.Priority,
		Events:         []api.Event{},
		Warnings:       s.warnings(spec.Pservers),
		RestartBudget:  api.RestartBudget{Limit: budget.Limit, Window: budget.Window.String()},
	}
	if p := s.Progress; p != nil {
		st.Pass, st.Step, st.Tasks, st.Metrics, st.ModelDir = p.Pass, p.Step, p.Tasks, p.Metrics, p.ModelDir
		if p.Passes > 0 {
			st.Passes = p.Passes
		}
		if p.SamplesApplied != nil {
			st.SamplesApplied = slices.Clone(p.SamplesApplied)
		}
	}
	for i := range spec.Pservers {
		w := s.workerView(jobspec.PserverName(i), nodeDown)
		ps := s.Pservers[i]
		st.Pservers = append(st.Pservers, api.PserverStatus{
			Index: i, Name: w.Name, Node: w.Node, PID: w.PID, Addr: ps.Addr,
			State: w.State, Restarts: w.Restarts, CheckpointStep: ps.CheckpointStep,
			BudgetUsed: budget.UsedAt(w.Crashes, now), Reason: s.hungReason(w),
		})
	}
	for i := range spec.Trainers {
		w := s.workerView(jobspec.TrainerName(i), nodeDown)
		id, ok := s.Trainers[w.Name]
		if !ok {
			id = i
		}
		st.Trainers = append(st.Trainers, api.TrainerStatus{
			ID: id, Name: w.Name, Node: w.Node, PID: w.PID, State: w.State, Restarts: w.Restarts,
			BudgetUsed: budget.UsedAt(w.Crashes, now), Reason: s.hungReason(w),
		})
	}
	m := s.workerView(jobspec.MasterName, nodeDown)
	st.Master = api.MasterStatus{Name: m.Name, Node: m.Node, PID: m.PID, Restarts: m.Restarts,
		BudgetUsed: budget.UsedAt(m.Crashes, now)}
	events := s.Events[max(0, len(s.Events)-maxEvents):]
	st.Events = append(st.Events, events...)
	st.History = append([]api.PassHistory{}, s.history...)
	fillCounts(&st, s, &spec)
	return st
}

// jobRow is one row of `gctl job list`. s.Record must be set.
func jobRow(s *jobSnapshot, now time.Time) api.JobRow {
	spec := s.Record.Spec
	row := api.JobRow{
		Name:     s.Name,
		State:    s.State.State,
		Passes:   spec.Passes,
		Trainers: spec.Trainers,
		Pservers: spec.Pservers,
		Created:  s.Record.Created,
		Age:      humanAge(now.Sub(s.Record.Created)),
		Owner:    owner(s.Record.Submitter),
	}
	if p := s.Progress; p != nil {
		row.Pass = p.Pass
		if p.Passes > 0 {
			row.Passes = p.Passes
		}
		row.Loss = p.Metrics.TestLoss
		if row.Loss == nil {
			row.Loss = p.Metrics.TrainLoss
		}
	}
	return row
}

// workerRows is `gctl job workers`, in spec.Workers() order. s.Record must be set.
func workerRows(s *jobSnapshot, nodeDown func(string) bool) []api.WorkerRow {
	names := s.Record.Spec.Workers()
	rows := make([]api.WorkerRow, 0, len(names))
	for _, name := range names {
		w := s.workerView(name, nodeDown)
		rows = append(rows, api.WorkerRow{Name: w.Name, Node: w.Node, PID: w.PID, State: w.State, Restarts: w.Restarts, Start: w.Start,
			GPUs: s.gpusOf(name, w.Node)})
	}
	return rows
}

// gpusOf is the devices the placement gives worker on node (an empty list
// when it gives none, or places the worker elsewhere now).
func (s *jobSnapshot) gpusOf(worker, node string) []int {
	if s.Placement == nil {
		return []int{}
	}
	if a, ok := s.Placement.Workers[worker]; ok && a.Node == node && len(a.GPUs) > 0 {
		return a.GPUs
	}
	return []int{}
}

// nodeRows is `gctl node list`: every node that ever registered, in name
// order, with its state (a dead node stays, down), its capacity and the
// workers that jobs which have not ended place on it ("fit-a-line/pserver-0").
func nodeRows(nodes []coord.ClusterNode, jobs map[string]*jobSnapshot, gossipDown func(string) bool) []api.NodeRow {
	roles := map[string][]string{}
	devices := map[string][]api.GPUDevice{}
	used := map[string]scheduler.Request{}
	names := make([]string, 0, len(jobs))
	for name := range jobs {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		s := jobs[name]
		if s.Record == nil || api.Terminal(s.State.State) {
			continue
		}
		requests := scheduler.Requests(&s.Record.Spec)
		for _, w := range s.Record.Spec.Workers() {
			if node := s.Record.Placement[w]; node != "" {
				roles[node] = append(roles[node], name+"/"+w)
				used[node] = used[node].Plus(requests[w])
				for _, d := range s.gpusOf(w, node) {
					devices[node] = append(devices[node], api.GPUDevice{Index: d, Holder: name + "/" + w})
				}
			}
		}
	}
	rows := make([]api.NodeRow, 0, len(nodes))
	for _, n := range nodes {
		r := roles[n.Name]
		if r == nil {
			r = []string{}
		}
		c := n.Record.Capacity
		labels := c.Labels
		if labels == nil {
			labels = map[string]string{}
		}
		u := used[n.Name]
		d := devices[n.Name]
		if d == nil {
			d = []api.GPUDevice{}
		}
		slices.SortFunc(d, func(a, b api.GPUDevice) int { return a.Index - b.Index })
		rows = append(rows, api.NodeRow{Name: n.Name, Addr: n.Record.APIAddr, State: n.State(gossipDown),
			CPU: c.CPU, Memory: c.Memory, GPUs: c.GPUs, CPUUsed: u.CPU, MemoryUsed: u.Memory, GPUsUsed: u.GPUs,
			Labels: labels, Roles: r, Devices: d, CertNotAfter: n.Record.CertNotAfter})
	}
	slices.SortFunc(rows, func(a, b api.NodeRow) int { return strings.Compare(a.Name, b.Name) })
	return rows
}

// humanAge is a job's age as `gctl job list` shows it: "45s", "3m12s",
// "2h5m", "3d4h".
func humanAge(d time.Duration) string {
	if d < 0 {
		d = 0
	}
	s := int64(d / time.Second)
	switch {
	case s < 60:
		return strconv.FormatInt(s, 10) + "s"
	case s < 3600:
		return fmt.Sprintf("%dm%ds", s/60, s%60)
	case s < 86400:
		return fmt.Sprintf("%dh%dm", s/3600, s%3600/60)
	default:
		return fmt.Sprintf("%dd%dh", s/86400, s%86400/3600)
	}
}

// owner is how a job's status names its submitter: "alice (operator)", as
// the submission's event does; "" when the job predates roles.
func owner(sub *schema.Submitter) string {
	if sub == nil {
		return ""
	}
	return sub.Name + " (" + sub.Role + ")"
}
