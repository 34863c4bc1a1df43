package master

import (
	"context"
	"fmt"
	"net"
	"os"
	"time"

	"github.com/gtrain/gtrain/api"
	"github.com/gtrain/gtrain/coord"
	"github.com/gtrain/gtrain/internal/jobdir"
	"github.com/gtrain/gtrain/jobspec"
	"github.com/gtrain/gtrain/master/core"
	"github.com/gtrain/gtrain/master/recovery"
	"github.com/gtrain/gtrain/program"
	"github.com/gtrain/gtrain/pserver/client"
	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/grpc"
)

// stallAfter is how long a sync step may wait for its trainers before the
// operator is told which ones it waits for.
const stallAfter = 30 * time.Second

// epochCheckEvery is how often a sync master asks the pservers for their
// epochs, to finish a rollback its predecessor left half done.
const epochCheckEvery = 5 * time.Second

// ErrLeadershipLost ends Run when the etcd session ends under a live master.
// It wraps coord.ErrSessionLost: the agent restarts such a master without
// counting it against the job's crash budget.
var ErrLeadershipLost = fmt.Errorf("master: leadership lost: %w", coord.ErrSessionLost)

// leader is this process once it leads the job: what the steps of Run share.
type leader struct {
	cli    *clientv3.Client
	cfg    Config
	job    *jobData
	lead   *coord.Leadership
	ps     *client.Dynamic
	driver *Driver
	recov  *recovery.Recovery  // sync only
	hung   *hungLeader         // sync only
	srv    *grpc.Server        // nil until serve
	opts   []grpc.ServerOption // serves trainers with: TLS, the job credential's check
	prog   *program.Client     // evaluates a model program; nil for built-in models

	stallReported int64  // the step last reported stalled
	warned        string // the pass-end warning last told as an event
	warnedPass    int    // the pass whose end it held
}

// newLeader connects to the pservers and restores the master's state.
func newLeader(ctx context.Context, cli *clientv3.Client, cfg Config, job *jobData, lead *coord.Leadership) (*leader, error) {
	plane, err := cfg.DataPlane()
	if err != nil {
		return nil, fmt.Errorf("master: %w", err)
	}
	serverOpts, err := plane.ServerOptions()
	if err != nil {
		return nil, fmt.Errorf("master: %w", err)
	}
	dial, err := plane.Dial()
	if err != nil {
		return nil, fmt.Errorf("master: %w", err)
	}
	ps, err := client.NewDynamic(ctx, cli, cfg.Job, job.spec.Pservers, job.layout.Blocks, dial, cfg.Log)
	if err != nil {
		return nil, fmt.Errorf("master: %w", err)
	}
	l := &leader{cli: cli, cfg: cfg, job: job, lead: lead, ps: ps, opts: serverOpts, stallReported: -1}
	if l.driver, err = l.newDriver(ctx); err != nil {
		ps.Close()
		return nil, err
	}
	return l, nil
}

func (l *leader) close() {
	if l.srv != nil {
		l.srv.Stop()
	}
	l.ps.Close()
	if l.prog != nil {
		l.prog.Close()
	}
}

func (l *leader) newDriver(ctx context.Context) (*Driver, error) {
	spec := l.job.spec
	modelDir := jobdir.Model(l.cfg.DataDir, spec)
	eval := &PassEvaluator{Layout: l.job.layout, PS: l.ps, Test: l.job.test, ModelDir: modelDir, Log: l.cfg.Log, Procs: l.cfg.EvalProcs,
		Async: spec.Mode == jobspec.ModeAsync, Optimizer: spec.Optimizer, MkdirAll: l.job.roots.MkdirAll}
	var err error
	if l.prog, err = l.startProgram(ctx); err != nil {
		return nil, err
	}
	eval.Program, eval.FailJob = l.prog, l.programFailed
	qcfg := core.DefaultQueueConfig()
	qcfg.Seed = spec.Seed
	qcfg.NoShuffle = !spec.Data.ShuffleRecords()
	sync := spec.Mode == jobspec.ModeSync
	if sync {
		qcfg.Timeout = 24 * time.Hour * 365 // sync tasks belong to the step group, not to one trainer
	}
	every, everySteps, err := spec.Checkpoint.Interval()
	if err != nil {
		return nil, fmt.Errorf("master: checkpoint.every: %w", err)
	}
	_, maxTrainers := spec.TrainerBounds() // IDs for every trainer the job may scale to
	ccfg := core.CoreConfig{Sync: sync, Trainers: maxTrainers, MicroBatches: spec.MicroBatches(), Batch: spec.BatchSize, Passes: spec.Passes,
		Queue: qcfg, ModelDir: modelDir, LongPoll: l.cfg.LongPoll, CheckpointEvery: every, CheckpointSteps: everySteps}
	ccfg.StragglerFactor, ccfg.StragglerFloor = spec.Stragglers.Deadline()
	store := NewEtcdStore(l.cli, l.lead, l.cfg.Job)
	return NewDriver(ctx, ccfg, l.job.tasks, store, eval, SystemClock{}, l.cfg.Log)
}

// announce marks the job running and tells where this master took it up.
func (l *leader) announce(ctx context.Context) error {
	if _, err := coord.SetJobState(ctx, l.cli, l.cfg.Job, api.StateRunning, "", l.lead.Guard()); err != nil {
		return fmt.Errorf("master: %w", err)
	}
	pass, step := l.driver.Position()
	_ = coord.AppendEvent(ctx, l.cli, l.cfg.Job, fmt.Sprintf("master on %s (pid %d) leads, term %d, at pass %d step %d",
		l.cfg.Node, os.Getpid(), l.lead.Rev(), pass, step))
	return nil
}

// startRecovery (sync) starts keeping the job restorable, after rolling it
// back if the pservers and the stored state disagree; stop ends the master
// when that work fails in the background.
func (l *leader) startRecovery(ctx context.Context, stop context.CancelFunc) error {
	if l.job.spec.Mode != jobspec.ModeSync {
		return nil
	}
	spec := l.job.spec
	r, err := recovery.Open(ctx, recovery.EtcdConfig{Cli: l.cli, Lead: l.lead, Job: l.cfg.Job, JobRev: l.job.rev,
		Dir: jobdir.MasterCheckpoints(l.cfg.DataDir, spec), Keep: spec.Checkpoint.Keep, Paths: l.job.roots, Log: l.cfg.Log}, l.driver, l.ps)
	if err != nil {
		return fmt.Errorf("master: %w", err)
	}
	l.recov = r
	if err := r.Start(ctx, stop); err != nil {
		return fmt.Errorf("master: %w", err)
	}
	return nil
}

// serve starts the Master gRPC service on lis; the channel gets its end.
func (l *leader) serve(ctx context.Context, lis net.Listener) <-chan error {
	l.srv = grpc.NewServer(append(serverOptions(), l.opts...)...)
	_, maxTrainers := l.job.spec.TrainerBounds()
	ms := NewServer(l.driver, NewTrainerRegistry(l.cli, l.lead, l.cfg.Job, maxTrainers), l.job.spec.Trainers)
	if l.recov != nil {
		ms.rollback = func(_ context.Context, epoch int64, why string) error {
			// The rollback outlives the trainer's request.
			return l.recov.RequestRollback(ctx, epoch, why)
		}
	}
	api.RegisterMasterServer(l.srv, ms)
	serveErr := make(chan error, 1)
	go func() { serveErr <- l.srv.Serve(lis) }()
	return serveErr
}

// loop serves until training is done, the job ends elsewhere or this
// master must stop.
func (l *leader) loop(ctx, leadCtx context.Context, serveErr <-chan error) error {
	ended := coord.WatchJobEnd(leadCtx, l.cli, l.cfg.Job)
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	var epochCheck <-chan time.Time
	if l.recov != nil {
		t := time.NewTicker(epochCheckEvery)
		defer t.Stop()
		epochCheck = t.C
		l.hung = newHungLeader(l)
		go l.hung.probe(leadCtx)
	}
	for {
		select {
		case <-ended:
			if !l.driver.Done() {
				l.cfg.Log.Info("job ended elsewhere (stopped or failed); master exits")
				return nil
			}
		case <-leadCtx.Done():
			if ctx.Err() != nil {
				return nil
			}
			return ErrLeadershipLost
		case err := <-serveErr:
			return fmt.Errorf("master: serve: %w", err)
		case <-tick.C:
			if err := l.tick(leadCtx); err != nil {
				return err
			}
		case <-epochCheck:
			if err := l.recov.CheckEpochs(leadCtx, maxProbeTimeout); err != nil {
				return err
			}
		case <-l.driver.Changed():
		}
		if err := l.driver.Fatal(); err != nil {
			return err
		}
		if reason := l.driver.Failed(); reason != "" {
			return l.fail(leadCtx, reason)
		}
		l.tellWarning(leadCtx)
		if l.driver.Done() {
			return l.finish(leadCtx)
		}
	}
}

// tick takes back timed-out tasks, catches the progress record up and tells
// the operator of a stalled step.
func (l *leader) tick(ctx context.Context) error {
	if err := l.driver.Tick(ctx); err != nil {
		return err
	}
	if err := l.driver.FlushProgress(ctx); err != nil {
		return err
	}
	if l.hung != nil {
		if err := l.hung.check(ctx); err != nil {
			l.cfg.Log.Warn("hung check", "err", err) // the next tick retries
		}
	}
	step, missing, stalled := l.driver.Stalled(stallAfter)
	if !stalled || step == l.stallReported {
		return nil
	}
	l.stallReported = step
	what := stallMessage(step, missing, l.cfg.Job)
	l.cfg.Log.Warn(what)
	_ = coord.AppendEvent(ctx, l.cli, l.cfg.Job, what)
	return nil
}

// stallMessage tells the operator of a step that waits for its trainers:
// those holding a part of it, or, when none holds any, that no trainer has
// asked for it (an empty list would read as nobody to wait for).
func stallMessage(step int64, missing []int, job string) string {
	if len(missing) == 0 {
		return fmt.Sprintf("step %d has waited more than %s: no trainer has asked for it (see gctl job workers %s: are the trainers running?)",
			step, stallAfter, job)
	}
	return fmt.Sprintf("step %d has waited more than %s: no report yet from trainer IDs %v (see gctl job workers %s and their logs)",
		step, stallAfter, missing, job)
}

// fail ends the job FAILED with reason (it diverged) and this master with
// it, exit 0: a restart would meet the same numbers. Should etcd refuse the
// write, the error restarts the master, which finds the divergence again.
func (l *leader) fail(ctx context.Context, reason string) error {
	if _, err := coord.SetJobState(ctx, l.cli, l.cfg.Job, api.StateFailed, reason, l.lead.Guard()); err != nil {
		return fmt.Errorf("master: fail the job (%s): %w", reason, err)
	}
	_ = coord.AppendEvent(ctx, l.cli, l.cfg.Job, reason)
	l.cfg.Log.Error("job failed", "reason", reason)
	l.srv.Stop()
	return nil
}

// tellWarning records an event when the pass end's warning (a model write
// that fails) appears, and when it is gone: the pass ended, or a rollback
// abandoned it.
func (l *leader) tellWarning(ctx context.Context) {
	w := l.driver.Warning()
	if w == l.warned {
		return
	}
	pass, _ := l.driver.Position()
	what := w
	switch {
	case w == "" && pass > l.warnedPass:
		what = fmt.Sprintf("the master wrote the model of pass %d at last; training goes on", l.warnedPass)
	case w == "":
		what = fmt.Sprintf("the end of pass %d that could not write its model was rolled back; it will be redone", l.warnedPass)
	}
	if err := coord.AppendEvent(ctx, l.cli, l.cfg.Job, what); err != nil {
		l.cfg.Log.Warn("cannot record job event", "event", what, "err", err)
		return // told at the next change
	}
	l.cfg.Log.Warn(what)
	l.warned, l.warnedPass = w, pass
}

// finish marks the job succeeded and stops serving.
func (l *leader) finish(ctx context.Context) error {
	if _, err := coord.SetJobState(ctx, l.cli, l.cfg.Job, api.StateSucceeded, "", l.lead.Guard()); err != nil {
		return fmt.Errorf("master: %w", err)
	}
	_ = coord.AppendEvent(ctx, l.cli, l.cfg.Job, "training finished")
	l.cfg.Log.Info("training finished")
	// Let trainers long-polling for work hear DONE before the server goes,
	// but no longer than they need: the job shows ended, this process not.
	l.waitTrainersGone(ctx, l.cfg.LongPoll+500*time.Millisecond)
	l.srv.GracefulStop()
	return nil
}

// waitTrainersGone returns once no trainer is registered (each one's ID key
// goes with its lease when it exits), or after at most limit.
func (l *leader) waitTrainersGone(ctx context.Context, limit time.Duration) {
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	for {
		resp, err := l.cli.Get(ctx, coord.TrainerPrefix(l.cfg.Job), clientv3.WithPrefix(), clientv3.WithCountOnly())
		if err == nil && resp.Count == 0 {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(50 * time.Millisecond):
		}
	}
}
