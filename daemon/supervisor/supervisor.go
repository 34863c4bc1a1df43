package supervisor

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"time"

	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/gtrain/gtrain/api"
	"github.com/gtrain/gtrain/coord"
	"github.com/gtrain/gtrain/coord/schema"
	"github.com/gtrain/gtrain/internal/clock"
	"github.com/gtrain/gtrain/internal/jobdir"
	"github.com/gtrain/gtrain/internal/rolecfg"
	"github.com/gtrain/gtrain/internal/sandbox"
	"github.com/gtrain/gtrain/jobspec"
)

// resyncPause is the wait before re-reading the jobs after a failed watch.
const resyncPause = time.Second

// supervisor keeps, for every job that places workers on this node and has
// not ended, one runner per such worker: it starts what the scheduler
// places here and stops what it moves away. It follows the jobs through an
// etcd watch on coord.JobsPrefix (an initial read, then the watch from the
// next revision, and a full re-read whenever the watch breaks). It also
// answers the scheduler's storage checks of the jobs placed here.
type Supervisor struct {
	cli       *clientv3.Client
	node      string
	dataDir   string
	roles     roleLaunch
	stopGrace time.Duration
	clock     clock.Clock
	log       *slog.Logger

	// ctx ends with stop; the storage checks give up with it.
	ctx    context.Context
	cancel context.CancelFunc

	mu      sync.Mutex
	jobs    map[string]*jobEntry
	purges  map[string]chan struct{} // job -> closed when its latest purge is done
	checks  map[string]string        // job -> token of the storage check this node took part in
	closing bool
	wg      sync.WaitGroup // runners, purges and storage checks

	cpus *cpuManager // nil without --exclusive-cpus
}

// jobEntry is what the supervisor knows of one job.
type jobEntry struct {
	record    schema.JobRecord
	hasRecord bool
	fence     int64 // create revision of the job record
	state     api.JobState
	placement schema.PlacementRecord
	runners   map[string]*runner
}

// New is the supervisor of cfg.NodeName's roles; Run starts it.
func New(cli *clientv3.Client, cfg Config, clk clock.Clock) *Supervisor {
	ctx, cancel := context.WithCancel(context.Background())
	return &Supervisor{
		ctx:       ctx,
		cancel:    cancel,
		cli:       cli,
		node:      cfg.NodeName,
		dataDir:   cfg.DataDir,
		roles:     newRoleLaunch(cfg),
		stopGrace: cfg.StopGrace,
		clock:     clock.Or(clk),
		log:       cfg.Log,
		jobs:      map[string]*jobEntry{},
		purges:    map[string]chan struct{}{},
		checks:    map[string]string{},
		cpus:      newCPUManager(cfg.ExclusiveCPUs, cfg.Log),
	}
}

// Run follows the jobs until ctx ends. It does not stop the runners: Stop does.
func (s *Supervisor) Run(ctx context.Context) {
	go s.cpus.keepApplying(ctx, s.clock, s.runningRoles)
	for {
		rev, err := s.resync(ctx)
		if err == nil {
			err = s.watch(ctx, rev)
		}
		if ctx.Err() != nil {
			return
		}
		s.log.Warn("job watch broken; re-reading the jobs", "err", err)
		select {
		case <-ctx.Done():
			return
		case <-s.clock.After(resyncPause):
		}
	}
}

// resync reads every job's record and state and reconciles to them,
// including purging jobs that vanished while the watch was down.
func (s *Supervisor) resync(ctx context.Context) (int64, error) {
	resp, err := s.cli.Get(ctx, coord.JobsPrefix(), clientv3.WithPrefix())
	if err != nil {
		return 0, fmt.Errorf("read jobs: %w", err)
	}
	type seen struct {
		record, state, placement *mvccpb.KeyValue
	}
	jobs := map[string]*seen{}
	for _, kv := range resp.Kvs {
		key, ok := coord.ParseJobKey(string(kv.Key))
		if !ok {
			continue
		}
		j := jobs[key.Job]
		if j == nil {
			j = &seen{}
			jobs[key.Job] = j
		}
		switch key.Kind {
		case coord.JobKeyRecord:
			j.record = kv
		case coord.JobKeyState:
			j.state = kv
		case coord.JobKeyPlacement:
			j.placement = kv
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for job, e := range s.jobs {
		if j := jobs[job]; e.hasRecord && (j == nil || j.record == nil) {
			s.purgeLocked(job)
		}
	}
	for job, j := range jobs {
		if j.record != nil {
			s.applyRecordLocked(job, j.record)
		}
		if j.state != nil {
			s.applyStateLocked(job, j.state.Value)
		}
		if j.placement != nil {
			s.applyPlacementLocked(job, j.placement.Value)
		}
		s.reconcileLocked(job)
	}
	s.applyHungKVsLocked(resp.Kvs)
	return resp.Header.Revision, nil
}

func (s *Supervisor) watch(ctx context.Context, rev int64) error {
	wctx, cancel := context.WithCancel(clientv3.WithRequireLeader(ctx))
	defer cancel()
	wch := s.cli.Watch(wctx, coord.JobsPrefix(), clientv3.WithPrefix(), clientv3.WithRev(rev+1))
	for resp := range wch {
		if err := resp.Err(); err != nil {
			return fmt.Errorf("watch %s: %w", coord.JobsPrefix(), err)
		}
		s.apply(resp.Events)
	}
	return fmt.Errorf("watch %s: closed", coord.JobsPrefix())
}

// apply takes one batch of watch events, then reconciles the jobs it touched.
func (s *Supervisor) apply(events []*clientv3.Event) {
	s.mu.Lock()
	defer s.mu.Unlock()
	touched := map[string]bool{}
	for _, ev := range events {
		key, ok := coord.ParseJobKey(string(ev.Kv.Key))
		if !ok {
			continue
		}
		switch {
		case key.Kind == coord.JobKeyRecord && ev.Type == clientv3.EventTypeDelete:
			s.purgeLocked(key.Job)
		case key.Kind == coord.JobKeyRecord:
			s.applyRecordLocked(key.Job, ev.Kv)
		case key.Kind == coord.JobKeyState && ev.Type == clientv3.EventTypePut:
			s.applyStateLocked(key.Job, ev.Kv.Value)
		case key.Kind == coord.JobKeyPlacement && ev.Type == clientv3.EventTypePut:
			s.applyPlacementLocked(key.Job, ev.Kv.Value)
		case key.Kind == coord.JobKeyHung && ev.Type == clientv3.EventTypePut:
			s.applyHungLocked(key.Job, key.Name, ev.Kv.Value)
			continue
		default:
			continue
		}
		touched[key.Job] = true
	}
	for job := range touched {
		s.reconcileLocked(job)
	}
}

func (s *Supervisor) entryLocked(job string) *jobEntry {
	e := s.jobs[job]
	if e == nil {
		e = &jobEntry{runners: map[string]*runner{}}
		s.jobs[job] = e
	}
	return e
}

func (s *Supervisor) applyRecordLocked(job string, kv *mvccpb.KeyValue) {
	rec, err := schema.Decode[schema.JobRecord](kv.Value)
	if err != nil {
		s.log.Error("undecodable job record; ignoring the job", "key", string(kv.Key), "err", err)
		return
	}
	if e := s.jobs[job]; e != nil && e.hasRecord && e.fence != kv.CreateRevision {
		// The job was purged and submitted again while we were not looking.
		s.purgeLocked(job)
	}
	e := s.entryLocked(job)
	e.record, e.hasRecord, e.fence = rec, true, kv.CreateRevision
}

func (s *Supervisor) applyStateLocked(job string, raw []byte) {
	st, err := schema.Decode[schema.StateRecord](raw)
	if err != nil {
		s.log.Error("undecodable job state", "job", job, "err", err)
		return
	}
	s.entryLocked(job).state = st.State
}

func (s *Supervisor) applyPlacementLocked(job string, raw []byte) {
	p, err := schema.Decode[schema.PlacementRecord](raw)
	if err != nil {
		s.log.Error("undecodable placement", "job", job, "err", err)
		return
	}
	s.entryLocked(job).placement = p
}

// reconcileLocked makes the runners of job match its record, state and
// placement: a worker assigned here gets a runner (once this node verified
// the job's shared checkpoint.dir, if it has one), a runner whose worker
// was moved away, or assigned anew, is stopped. A runner stopped because
// its job ended is replaced when the job runs again (gctl job resume).
func (s *Supervisor) reconcileLocked(job string) {
	e := s.jobs[job]
	if e == nil || !e.hasRecord {
		return
	}
	if api.Terminal(e.state) {
		for _, r := range e.runners {
			r.requestStop(jobEnded)
		}
		return
	}
	for worker, r := range e.runners {
		if a := e.placement.Workers[worker]; a.Node != s.node || a.Gen != r.gen {
			r.requestStop(unplaced)
		}
	}
	if s.closing {
		return
	}
	s.checkStorageLocked(job, e)
	if e.record.Spec.Checkpoint.Dir != "" && !e.placement.IsVerified(s.node) {
		return
	}
	for _, worker := range e.record.Spec.Workers() {
		a := e.placement.Workers[worker]
		old := e.runners[worker]
		if a.Node != s.node || (old != nil && old.gen == a.Gen && old.stopReason() != jobEnded) {
			continue
		}
		if _, _, err := jobspec.ParseWorker(worker); err != nil {
			s.log.Error("cannot run worker", "job", job, "err", err)
			continue
		}
		r := newRunner(s, job, worker, e.fence, a, afterBoth(s.purges[job], old))
		r.budget = BudgetOf(e.record.Spec.Restarts)
		if role, _, _ := jobspec.ParseWorker(worker); role == jobspec.RoleTrainer && !e.record.Spec.Model.IsProgram() {
			r.cpu, r.trainersHere = e.record.Spec.Resources.Trainer.CPU, s.trainersHereLocked(e)
		}
		e.runners[worker] = r
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			r.run()
		}()
	}
}

// afterBoth is closed once the purge before (if any) is done and the
// previous runner of the worker (if any) has returned: a worker placed here
// anew starts after its old incarnation is gone.
func afterBoth(purge <-chan struct{}, prev *runner) <-chan struct{} {
	switch {
	case prev == nil:
		return purge
	case purge == nil:
		return prev.done
	}
	both := make(chan struct{})
	go func() {
		<-purge
		<-prev.done
		close(both)
	}()
	return both
}

// purgeLocked forgets a job whose record was deleted: its children are
// stopped and, once they are gone, its directory is removed.
func (s *Supervisor) purgeLocked(job string) {
	e := s.jobs[job]
	delete(s.jobs, job)
	var runners []*runner
	if e != nil {
		for _, r := range e.runners {
			r.requestStop(purged)
			runners = append(runners, r)
		}
	}
	delete(s.checks, job)
	prev := s.purges[job]
	done := make(chan struct{})
	s.purges[job] = done
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		if prev != nil {
			<-prev
		}
		for _, r := range runners {
			<-r.done
		}
		if err := os.RemoveAll(jobdir.Root(s.dataDir, job)); err != nil {
			s.log.Warn("cannot remove the directory of a purged job", "job", job, "err", err)
		}
		// Its programs are gone with its roles: their uid is free again.
		if err := sandbox.ReleaseJob(s.dataDir, job); err != nil {
			s.log.Warn("cannot release the program uids of a purged job", "job", job, "err", err)
		}
		if e != nil && e.record.Spec.Checkpoint.Dir != "" {
			// Beneath the job's roots: a checkpoint.dir swapped for a
			// symlink since is not followed to remove a file elsewhere.
			if roots, err := rolecfg.JobRoots(s.roles.allowed, s.dataDir, &e.record.Spec); err == nil {
				_ = roots.Remove(markerPath(e.record.Spec.Checkpoint.Dir, job, e.fence, s.node))
			}
		}
		close(done)
		s.mu.Lock()
		if s.purges[job] == done {
			delete(s.purges, job)
		}
		s.mu.Unlock()
	}()
}

// Stop stops every child (SIGTERM, SIGKILL after StopGrace) and waits for
// them and for pending purges. Call it after Run has returned.
func (s *Supervisor) Stop() {
	s.cancel()
	s.mu.Lock()
	s.closing = true
	for _, e := range s.jobs {
		for _, r := range e.runners {
			r.requestStop(agentStopping)
		}
	}
	s.mu.Unlock()
	s.wg.Wait()
}

// JobView is what the supervisor knows of a job, for the Logs follower.
type JobView struct {
	Known  bool // the job has a record
	State  api.JobState
	Active bool // a child of the job may still run on this node
}

// View is what the supervisor knows of job now.
func (s *Supervisor) View(job string) JobView {
	s.mu.Lock()
	defer s.mu.Unlock()
	e := s.jobs[job]
	if e == nil {
		_, purging := s.purges[job]
		return JobView{Active: purging}
	}
	v := JobView{Known: e.hasRecord, State: e.state}
	for _, r := range e.runners {
		if !r.finished() {
			v.Active = true
		}
	}
	return v
}

// Responsive returns once the supervisor's lock is free: the agent's
// watchdog probe (a wedged supervisor holds it forever).
func (s *Supervisor) Responsive() {
	s.mu.Lock()
	s.mu.Unlock() //nolint:staticcheck // an empty critical section: the probe only needs the lock
}

// runningRoles is the process of each runner whose role runs now.
func (s *Supervisor) runningRoles() map[*runner]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[*runner]int{}
	for _, e := range s.jobs {
		for _, r := range e.runners {
			r.mu.Lock()
			if r.pid > 0 {
				out[r] = r.pid
			}
			r.mu.Unlock()
		}
	}
	return out
}

// trainersHereLocked counts the trainers of e placed on this node.
func (s *Supervisor) trainersHereLocked(e *jobEntry) int {
	n := 0
	for worker, a := range e.placement.Workers {
		if role, _, _ := jobspec.ParseWorker(worker); role == jobspec.RoleTrainer && a.Node == s.node {
			n++
		}
	}
	return n
}
