package supervisor

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/gtrain/gtrain/api"
	"github.com/gtrain/gtrain/coord"
	"github.com/gtrain/gtrain/coord/schema"
	"github.com/gtrain/gtrain/internal/cpuaffinity"
	"github.com/gtrain/gtrain/internal/fileperm"
	"github.com/gtrain/gtrain/internal/jobauth"
	"github.com/gtrain/gtrain/internal/jobdir"
)

// stopReason says why a runner must stop; a higher value is more urgent and
// overrides a lower one.
type stopReason int

const (
	keepRunning stopReason = iota
	// jobEnded: the roles end by themselves when their job does, so the
	// child first gets StopGrace to do so before it is signalled.
	jobEnded
	// unplaced: the worker no longer runs on this node.
	unplaced
	// agentStopping: the agent shuts down; the job goes on elsewhere or later.
	agentStopping
	// purged: the job's records are gone; nothing may be written back.
	purged
)

// etcdTimeout bounds every etcd call of a runner, so that a dead etcd
// cannot keep the agent from stopping its children.
const etcdTimeout = 5 * time.Second

// runner keeps one worker of one job running on this node: it starts the
// child, restarts it within the crash budget and mirrors its life in the
// worker's WorkerRecord.
type runner struct {
	sup    *Supervisor
	job    string
	worker string
	// fence is the create revision of the job's record: every write is
	// conditional on it, so a runner of a purged job can neither resurrect
	// its keys nor scribble on a new job that reuses the name.
	fence int64
	// gen is the placement generation (schema.Assignment.Gen) that put the
	// worker here: the runner never overwrites the record of a newer one.
	gen int64
	// gpus are the node's GPUs the assignment of gen gave the worker
	// (schema.Assignment.GPUs): the child sees those alone.
	gpus []int
	// cpu is resources.trainer.cpu for a trainer of a built-in model (0
	// for the other roles, and for a model program's trainer: its program
	// on a CPU of its own, the trainer beside the pservers, stepped slower
	// on the 2-core VM, 35.1-50.7 ms against 33.3-40.6 in 3 alternated rounds):
	// whole CPUs get CPUs of its own with --exclusive-cpus (cpus.go), if
	// the trainersHere trainers of its job placed on this node all can.
	cpu          float64
	trainersHere int
	// budget counts the worker's crashes against its job's restarts spec.
	budget CrashBudget
	// after is closed once the purge of a previous job of the same name has
	// removed its directory and the worker's previous runner here has
	// returned (nil when there was neither).
	after <-chan struct{}

	poke chan struct{} // a stop request arrived
	done chan struct{} // run returned

	mu       sync.Mutex
	reason   stopReason
	pid      int // the child's, while it runs (see killHung)
	restarts int // as last recorded, for /metrics
}

func newRunner(s *Supervisor, job, worker string, fence int64, a schema.Assignment, after <-chan struct{}) *runner {
	return &runner{
		sup: s, job: job, worker: worker, fence: fence, gen: a.Gen, gpus: a.GPUs, after: after,
		poke: make(chan struct{}, 1),
		done: make(chan struct{}),
	}
}

// requestStop asks the runner to stop its child (and not restart it) for
// reason; a more urgent reason overrides a pending one.
func (r *runner) requestStop(reason stopReason) {
	r.mu.Lock()
	if reason > r.reason {
		r.reason = reason
	}
	r.mu.Unlock()
	select {
	case r.poke <- struct{}{}:
	default:
	}
}

func (r *runner) stopReason() stopReason {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.reason
}

func (r *runner) finished() bool {
	select {
	case <-r.done:
		return true
	default:
		return false
	}
}

// exitInfo is how a child ended.
type exitInfo struct {
	code int    // exit status, 128+signal when killed by a signal, -1 when it never started
	desc string // "exit status 3", "signal: killed", "cannot start: ..."
}

func exitOf(state *os.ProcessState) exitInfo {
	if ws, ok := state.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return exitInfo{code: 128 + int(ws.Signal()), desc: state.String()}
	}
	return exitInfo{code: state.ExitCode(), desc: state.String()}
}

// run is the runner's life: start, wait, decide, repeat.
func (r *runner) run() {
	defer close(r.done)
	if r.after != nil {
		select {
		case <-r.after:
		case <-r.poke:
			if r.stopReason() != keepRunning {
				return
			}
			<-r.after
		}
	}
	log := r.sup.log.With("job", r.job, "worker", r.worker)
	rec := schema.WorkerRecord{Name: r.worker, Node: r.sup.node, Host: coord.HostID()}
	if prev, ok := r.previousRecord(); ok {
		if prev.State == api.WorkerExited {
			// The role finished before this agent (re)started; it must not run twice.
			return
		}
		rec.Restarts = prev.Restarts
		// The PID means something only on the host that wrote it: the node
		// name may have moved to another machine since.
		if prev.State.Active() && prev.PID > 0 && prev.Node == r.sup.node && coord.IsLocalHost(prev.Host) {
			takeOver(prev.PID, r.job, r.worker, log)
		}
	}
	if cpus := r.sup.cpus.give(r, r.cpu, r.trainersHere, r.sup.runningRoles); cpus != nil {
		log.Info("the worker computes on CPUs of its own (--exclusive-cpus)", "cpus", cpuaffinity.Format(cpus))
		defer r.sup.cpus.takeBack(r, r.sup.runningRoles)
	}
	quickCrashes := 0
	for attempt := rec.Restarts + 1; ; attempt++ {
		if reason := r.stopReason(); reason != keepRunning {
			r.finish(rec, api.WorkerStopped, reason)
			return
		}
		rec.State, rec.PID, rec.ExitCode, rec.Start = api.WorkerStarting, 0, 0, r.sup.clock.Now().UTC()
		r.putRecord(rec)
		started := r.sup.clock.Now()
		exit, signalled := r.runOnce(attempt, &rec, log)
		reason := r.stopReason()
		rec.ExitCode = exit.code
		switch {
		case reason != keepRunning:
			// A role that ended by itself with its job is done; one we
			// signalled was stopped, and a restarted agent brings it back
			// if its job still runs.
			state := api.WorkerStopped
			if exit.code == 0 && !signalled {
				state = api.WorkerExited
			}
			r.finish(rec, state, reason)
			return
		case exit.code == 0:
			log.Info("worker exited", "attempt", attempt)
			r.finish(rec, api.WorkerExited, reason)
			return
		}
		now := r.sup.clock.Now()
		if !r.countCrash(&rec, exit, now, log) {
			return
		}
		if now.Sub(started) >= r.budget.Window {
			quickCrashes = 0
		}
		quickCrashes++
		rec.State, rec.PID = api.WorkerRestarting, 0
		r.putRecord(rec)
		if !r.pause(restartBackoff(quickCrashes)) {
			r.finish(rec, api.WorkerStopped, r.stopReason())
			return
		}
	}
}

// countCrash books an unexpected exit: against the crash budget, unless
// the role said it lost etcd or its master (which is no fault of its own
// and must not fail a job through an etcd outage). It reports whether the
// worker is to be restarted; when the budget is spent it fails the job.
func (r *runner) countCrash(rec *schema.WorkerRecord, exit exitInfo, now time.Time, log *slog.Logger) bool {
	what := fmt.Sprintf("%s exited (%s); restarting (restart %d)", r.worker, exit.desc, rec.Restarts+1)
	if exit.code == ExitLostContact {
		what = fmt.Sprintf("%s lost etcd or its master (%s); restarting (restart %d, not counted against the crash budget)", r.worker, exit.desc, rec.Restarts+1)
	} else {
		crashes, exceeded := r.budget.crash(now)
		rec.Crashes = r.budget.times()
		if exceeded {
			r.failJob(rec, crashes, exit, log)
			return false
		}
	}
	rec.Restarts++
	log.Warn(what)
	r.event(what)
	return true
}

// runOnce starts the child, waits for it to end and returns how it ended
// and whether it was signalled to stop; rec is updated to running with the
// child's PID while it lives.
func (r *runner) runOnce(attempt int, rec *schema.WorkerRecord, log *slog.Logger) (exitInfo, bool) {
	cmd, err := r.start(attempt)
	if err != nil {
		log.Warn("cannot start worker", "err", err)
		code := -1
		if errors.Is(err, errNoSecret) { // etcd's fault, not the role's: not counted against the crash budget
			code = ExitLostContact
		}
		return exitInfo{code: code, desc: "cannot start: " + err.Error()}, false
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	rec.State, rec.PID = api.WorkerRunning, cmd.Process.Pid
	r.setPID(rec.PID)
	defer r.setPID(0)
	r.putRecord(*rec)
	log.Info("worker started", "pid", rec.PID, "attempt", attempt)
	signalled := r.supervise(cmd.Process.Pid, exited)
	return exitOf(cmd.ProcessState), signalled
}

// start launches the child with its output appended to the worker's log.
func (r *runner) start(attempt int) (*exec.Cmd, error) {
	cmd, err := r.sup.roles.command(r.job, r.worker, r.fence, r.gpus, r.sup.cpus.exclusive(r))
	if err != nil {
		return nil, err
	}
	logFile, err := openWorkerLog(r.sup.dataDir, r.job, r.worker)
	if err != nil {
		return nil, err
	}
	defer logFile.Close() // the child holds its own descriptor
	if err := r.writeCredential(); err != nil {
		fmt.Fprintf(logFile, "=== gtraind: cannot start %s: %v ===\n", r.worker, err)
		return nil, err
	}
	header := fmt.Sprintf("=== gtraind: starting %s (attempt %d) at %s ===\n",
		r.worker, attempt, r.sup.clock.Now().UTC().Format(time.RFC3339))
	if _, err := logFile.WriteString(header); err != nil {
		return nil, fmt.Errorf("write log %s: %w", logFile.Name(), err)
	}
	cmd.Dir = r.sup.dataDir
	cmd.Stdout, cmd.Stderr = logFile, logFile
	// Pdeathsig: a SIGKILLed agent takes its roles with it, so a restarted
	// agent never finds strays. (Linux sends it when the forking *thread*
	// ends; the Go runtime only ends threads of goroutines that exit while
	// locked to them, which nothing here does.) Setpgid: signals reach the
	// role's own children too, and a Ctrl-C on the agent's terminal does not.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	// The child starts on the CPUs of the agent's thread that forks it,
	// which the last CPUs given moved to the shared ones (cpus.go); its PID
	// is recorded before CPUs are given again.
	unlock := r.sup.cpus.lockForks()
	defer unlock()
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(logFile, "=== gtraind: cannot start %s: %v ===\n", r.worker, err)
		return nil, fmt.Errorf("start %v: %w", cmd.Args, err)
	}
	r.setPID(cmd.Process.Pid)
	return cmd, nil
}

// errNoSecret: the job's data-plane secret could not be had from etcd.
var errNoSecret = errors.New("no job secret")

// writeCredential puts the job's data-plane secret (made now if the job has
// none yet) into the job's credential file, whose path the role is given.
func (r *runner) writeCredential() error {
	ctx, cancel := context.WithTimeout(context.Background(), etcdTimeout)
	defer cancel()
	secret, err := coord.EnsureJobSecret(ctx, r.sup.cli, r.job, r.fence, jobauth.NewSecret)
	if err != nil {
		return fmt.Errorf("%w: %v", errNoSecret, err)
	}
	return jobauth.WriteFile(jobdir.Credential(r.sup.dataDir, r.job), secret)
}

// supervise waits for the child to exit, escalating stop requests:
// jobEnded waits StopGrace first; then SIGTERM, and SIGKILL after StopGrace.
// It reports whether the child was signalled.
func (r *runner) supervise(pid int, exited <-chan error) bool {
	var termTimer, killTimer <-chan time.Time
	termSent := false
	for {
		select {
		case <-exited:
			return termSent
		case <-r.poke:
			switch reason := r.stopReason(); {
			case reason == keepRunning || termSent:
			case reason == jobEnded:
				if termTimer == nil {
					termTimer = r.sup.clock.After(r.sup.stopGrace)
				}
			default:
				signalGroup(pid, syscall.SIGTERM)
				termSent, termTimer = true, nil
				killTimer = r.sup.clock.After(r.sup.stopGrace)
			}
		case <-termTimer:
			signalGroup(pid, syscall.SIGTERM)
			termSent, termTimer = true, nil
			killTimer = r.sup.clock.After(r.sup.stopGrace)
		case <-killTimer:
			signalGroup(pid, syscall.SIGKILL)
			killTimer = nil
		}
	}
}

// pause waits d before a restart; false if a stop request came meanwhile.
func (r *runner) pause(d time.Duration) bool {
	t := r.sup.clock.NewTimer(d)
	defer t.Stop()
	for {
		select {
		case <-t.C():
			return r.stopReason() == keepRunning
		case <-r.poke:
			if r.stopReason() != keepRunning {
				return false
			}
		}
	}
}

// failJob spends the last of the crash budget: the job fails with a reason
// that says where to look.
func (r *runner) failJob(rec *schema.WorkerRecord, crashes int, exit exitInfo, log *slog.Logger) {
	cause := ""
	if line := lastErrorLine(jobdir.WorkerLog(r.sup.dataDir, r.job, r.worker)); line != "" {
		cause = fmt.Sprintf("; its last error: %q", line)
	}
	reason := fmt.Sprintf("%s crashed %d times in %s: %s%s; see `gctl job logs %s -w %s`",
		r.worker, crashes, r.budget.Window, exit.desc, cause, r.job, r.worker)
	log.Warn("restart budget spent; failing the job", "reason", reason)
	ctx, cancel := context.WithTimeout(context.Background(), etcdTimeout)
	defer cancel()
	if _, err := coord.SetJobState(ctx, r.sup.cli, r.job, api.StateFailed, reason, r.guard()); err != nil {
		log.Warn("cannot fail the job", "err", err)
	}
	r.event(reason)
	rec.State, rec.PID = api.WorkerFailed, 0
	r.putRecord(*rec)
}

// finish writes the runner's last record, unless the job is purged.
func (r *runner) finish(rec schema.WorkerRecord, state api.WorkerState, reason stopReason) {
	if reason == purged {
		return
	}
	if rec.Start.IsZero() {
		return // never started here: nothing to report
	}
	rec.State, rec.PID = state, 0
	r.putRecord(rec)
}

func (r *runner) guard() clientv3.Cmp {
	return clientv3.Compare(clientv3.CreateRevision(coord.JobKey(r.job)), "=", r.fence)
}

// putRecord writes the WorkerRecord if the job is still the one this runner
// serves and no runner of a newer placement of the worker (on another node)
// wrote it. Failures are logged: the process matters more than its record.
func (r *runner) putRecord(rec schema.WorkerRecord) {
	if r.stopReason() == purged {
		return
	}
	rec.Node, rec.Gen = r.sup.node, r.gen
	rec.Updated = r.sup.clock.Now().UTC()
	r.noteRestarts(rec.Restarts)
	ctx, cancel := context.WithTimeout(context.Background(), etcdTimeout)
	defer cancel()
	if err := writeWorkerRecord(ctx, r.sup.cli, r.job, r.guard(), rec); err != nil {
		r.sup.log.Warn("cannot record worker state", "job", r.job, "worker", r.worker, "state", rec.State, "err", err)
	}
}

func (r *runner) event(what string) {
	ctx, cancel := context.WithTimeout(context.Background(), etcdTimeout)
	defer cancel()
	if err := coord.AppendEvent(ctx, r.sup.cli, r.job, what); err != nil {
		r.sup.log.Warn("cannot record job event", "job", r.job, "event", what, "err", err)
	}
}

// previousRecord is the WorkerRecord left by an earlier agent on this
// node, if any.
func (r *runner) previousRecord() (schema.WorkerRecord, bool) {
	ctx, cancel := context.WithTimeout(context.Background(), etcdTimeout)
	defer cancel()
	var prev schema.WorkerRecord
	if _, err := coord.GetJSON(ctx, r.sup.cli, coord.WorkerKey(r.job, r.worker), &prev); err != nil {
		if !errors.Is(err, coord.ErrNotFound) {
			r.sup.log.Warn("cannot read worker record", "job", r.job, "worker", r.worker, "err", err)
		}
		return prev, false
	}
	return prev, true
}

// signalGroup signals the child's process group (its PID, by Setpgid).
func signalGroup(pid int, sig syscall.Signal) {
	if err := syscall.Kill(-pid, sig); err != nil {
		_ = syscall.Kill(pid, sig)
	}
}

// openWorkerLog opens the worker's log for appending, starting on a fresh
// line if a previous attempt died mid-line.
func openWorkerLog(dataDir, job, worker string) (*os.File, error) {
	if err := os.MkdirAll(jobdir.Log(dataDir, job), fileperm.Dir); err != nil {
		return nil, fmt.Errorf("create log directory of job %s: %w", job, err)
	}
	path := jobdir.WorkerLog(dataDir, job, worker)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_APPEND, fileperm.File)
	if err != nil {
		return nil, fmt.Errorf("open log %s: %w", path, err)
	}
	if st, err := f.Stat(); err == nil && st.Size() > 0 {
		last := make([]byte, 1)
		if _, err := f.ReadAt(last, st.Size()-1); err == nil && last[0] != '\n' {
			_, _ = f.WriteString("\n")
		}
	}
	return f, nil
}
