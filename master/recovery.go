package master

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"

	"github.com/gtrain/gtrain/checkpoint"
	"github.com/gtrain/gtrain/coord"
	"github.com/gtrain/gtrain/internal/jobdir"
	"github.com/gtrain/gtrain/jobspec"
	"github.com/gtrain/gtrain/master/core"
	"github.com/gtrain/gtrain/pserver/client"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// recovery keeps a sync job restorable: it writes the master's state at every
// checkpointed step, declares a global checkpoint once every participant has
// its part of a step on disk, and rolls the whole job back to the newest
// complete one when a pserver comes back from a crash.
type recovery struct {
	cli    *clientv3.Client
	lead   *coord.Leadership
	job    string
	driver *Driver
	ps     *client.Dynamic
	store  *checkpoint.Store // the master's own checkpoints
	log    *slog.Logger
	keep   int
	leases map[int]int64 // pserver index -> lease of the incarnation last seen ready (under mu once started)
	mu     sync.Mutex    // one rollback or re-shard at a time
}

// newRecovery opens the master's own checkpoints of a sync job.
func newRecovery(ctx context.Context, cli *clientv3.Client, lead *coord.Leadership, cfg Config, job *jobData, driver *Driver, ps *client.Dynamic) (*recovery, error) {
	spec := job.spec
	rec := checkpoint.NewEtcdRecorder(cli, func(i int) string { return coord.MasterCheckpointRecordKey(cfg.Job, i) })
	rec.Guard = []clientv3.Cmp{lead.Guard()}
	store, err := checkpoint.NewStore(checkpoint.Config{
		Identity: checkpoint.Identity{Job: cfg.Job, Rev: job.rev},
		Dir:      jobdir.MasterCheckpoints(cfg.DataDir, spec), Keep: spec.Checkpoint.Keep, Owner: jobspec.MasterName,
		// A pserver whose writes fail holds back the global checkpoint: keep its steps' files too.
		KeepSteps: func(ctx context.Context) ([]int64, error) { return coord.KeptGlobalSteps(ctx, cli, cfg.Job) },
	}, rec, cfg.Log)
	if err != nil {
		return nil, err
	}
	if _, _, err := store.Load(ctx); err != nil && !errors.Is(err, checkpoint.ErrNoCheckpoint) {
		cfg.Log.Warn("master checkpoints", "err", err)
	}
	return &recovery{cli: cli, lead: lead, job: cfg.Job, driver: driver, ps: ps, store: store,
		log: cfg.Log, keep: spec.Checkpoint.Keep}, nil
}

// start writes checkpoints and tracks global ones from now on, rolls the job
// back if the pservers and the stored state disagree, then watches for
// pservers coming back from a crash. stop ends the master when the tracking
// or a rollback fails in the background.
func (r *recovery) start(ctx context.Context, stop context.CancelFunc) error {
	watchFrom, err := r.readyLeases(ctx)
	if err != nil {
		return err
	}
	go r.writeCheckpoints(ctx)
	go func() {
		if err := r.trackGlobal(ctx); err != nil {
			r.log.Error("checkpoint tracking stopped; master exits so a successor resumes it", "err", err)
			stop()
		}
	}()
	if err := r.rollbackIfResharding(ctx); err != nil {
		return err
	}
	if err := r.checkConsistent(ctx); err != nil {
		return err
	}
	go func() {
		if err := r.watchPservers(ctx, watchFrom); err != nil && ctx.Err() == nil {
			r.log.Error("rollback failed; master exits so a successor retries", "err", err)
			stop()
		}
	}()
	go r.reshardLoop(ctx, stop)
	return nil
}

// writeCheckpoints saves the master's state at each checkpoint step.
func (r *recovery) writeCheckpoints(ctx context.Context) {
	for {
		var st core.State
		select {
		case st = <-r.driver.Snapshots():
		case <-ctx.Done():
			return
		}
		meta, err := json.Marshal(st)
		if err != nil {
			r.log.Error("encode master checkpoint", "err", err)
			continue
		}
		rec, err := r.store.Save(ctx, checkpoint.Snapshot{Index: 0, Step: st.Meta.Step, Meta: meta})
		if err != nil {
			r.log.Error("master checkpoint failed; training goes on", "step", st.Meta.Step, "err", err)
			continue
		}
		if err := r.lead.Commit(ctx, clientv3.OpPut(coord.CheckpointMarkKey(r.job, rec.Step, coord.MasterMark), rec.File)); err != nil {
			r.log.Error("master checkpoint mark", "err", err)
		}
	}
}

// trackGlobal declares step S the global checkpoint once the master and every
// pserver have marked S. It returns when the watch ends (an error unless ctx
// is done: a master that stops tracking checkpoints must not go on).
func (r *recovery) trackGlobal(ctx context.Context) error {
	for resp := range r.cli.Watch(ctx, coord.CheckpointMarkPrefix(r.job), clientv3.WithPrefix()) {
		if err := resp.Err(); err != nil {
			return fmt.Errorf("watch checkpoint marks: %w", err)
		}
		for _, ev := range resp.Events {
			if ev.Type != clientv3.EventTypePut {
				continue
			}
			step, _, ok := coord.ParseCheckpointMarkKey(r.job, string(ev.Kv.Key))
			if !ok {
				continue
			}
			if err := r.maybeDeclare(ctx, step); err != nil {
				r.log.Error("declare global checkpoint", "step", step, "err", err)
			}
		}
	}
	if ctx.Err() != nil {
		return nil
	}
	return errors.New("watch of checkpoint marks ended")
}

// maybeDeclare makes step the newest global checkpoint if every participant
// marked it. The record is re-read each time: a rollback rewrites it.
func (r *recovery) maybeDeclare(ctx context.Context, step int64) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	var global coord.GlobalCheckpoint
	if _, err := coord.GetJSON(ctx, r.cli, coord.GlobalCheckpointKey(r.job), &global); err != nil && !errors.Is(err, coord.ErrNotFound) {
		return err
	}
	if step <= global.Step {
		return nil
	}
	pservers := r.ps.Servers()
	marks, err := r.countMarks(ctx, step, pservers)
	if err != nil {
		return err
	}
	pass, _ := r.driver.Position()
	global, ok := declareGlobal(global, step, marks, pservers+1, pass, r.keep)
	if !ok {
		return nil
	}
	// Marks of steps no longer kept are not needed to decide anything.
	if err := r.lead.Commit(ctx, clientv3.OpPut(coord.GlobalCheckpointKey(r.job), coord.MustJSON(global)),
		coord.DeleteMarksBefore(r.job, global.Steps[0])); err != nil {
		return err
	}
	r.log.Info("global checkpoint complete", "step", step)
	return nil
}

// watchPservers rolls back when a pserver comes back from a crash: a new
// incarnation (lease) of an index announces itself ready, restored at a
// complete global checkpoint, while the others went on.
func (r *recovery) watchPservers(ctx context.Context, rev int64) error {
	for resp := range r.cli.Watch(ctx, coord.PserverPrefix(r.job), clientv3.WithPrefix(), clientv3.WithRev(rev)) {
		if err := resp.Err(); err != nil {
			return fmt.Errorf("watch pservers: %w", err)
		}
		for _, ev := range resp.Events {
			if ev.Type != clientv3.EventTypePut {
				continue
			}
			var rec coord.PserverRecord
			if json.Unmarshal(ev.Kv.Value, &rec) != nil || !rec.Ready || r.knownIncarnation(rec, ev.Kv.Lease) {
				continue
			}
			why := fmt.Sprintf("pserver-%d restarted (pid %d)", rec.Index, rec.PID)
			if err := r.rollback(ctx, why, rec.RestoredStep); err != nil {
				return err
			}
		}
	}
	if ctx.Err() != nil {
		return nil
	}
	return errors.New("watch of pservers ended")
}

// requestRollback serves a trainer that found the pservers at different
// steps; a rollback already done since its epoch answers it.
func (r *recovery) requestRollback(ctx context.Context, epoch int64, why string) error {
	if r.driver.Epoch() > epoch {
		return nil
	}
	return r.rollback(ctx, why, -1)
}

// readyLeases records the incarnations serving now; it returns the etcd
// revision to watch from.
func (r *recovery) readyLeases(ctx context.Context) (int64, error) {
	resp, err := r.cli.Get(ctx, coord.PserverPrefix(r.job), clientv3.WithPrefix())
	if err != nil {
		return 0, err
	}
	r.leases = map[int]int64{}
	for _, kv := range resp.Kvs {
		var rec coord.PserverRecord
		if json.Unmarshal(kv.Value, &rec) == nil && rec.Ready {
			r.leases[rec.Index] = kv.Lease
		}
	}
	return resp.Header.Revision + 1, nil
}

// checkConsistent catches the master up with the steps the pservers applied
// since its state was last saved, and rolls back at start when the pservers
// and the stored master state do not describe one history (e.g. everything
// restarted after an agent crash, each pserver from a global checkpoint; or
// a master died in the middle of a rollback).
func (r *recovery) checkConsistent(ctx context.Context) error {
	steps, epochs, err := r.ps.Client().Steps(ctx)
	if err != nil {
		return err
	}
	_, at := r.driver.Position()
	epoch := r.driver.Epoch()
	target, consistent := checkPservers(steps, epochs, at, epoch)
	why := fmt.Sprintf("pservers at steps %v, epochs %v; the master at step %d, epoch %d", steps, epochs, at, epoch)
	if consistent && len(steps) > 0 && steps[0] > at {
		// Steps applied since the last save: commit them from the plan.
		err := r.driver.CatchUp(ctx, steps[0])
		if err == nil {
			_ = coord.AppendEvent(ctx, r.cli, r.job, fmt.Sprintf("master caught up from step %d to step %d: the steps the pservers applied since the last save, committed from the plan", at, steps[0]))
		}
		if !errors.Is(err, core.ErrBadStep) {
			return err
		}
		why, consistent = fmt.Sprintf("%s: %v", why, err), false
	}
	if consistent {
		return nil
	}
	return r.rollback(ctx, why, target)
}

// checkEpochs rolls back when a pserver is in a newer epoch than the master:
// a rollback was cut short (its master died after restoring some pservers).
func (r *recovery) checkEpochs(ctx context.Context) error {
	// Bounded: a stopped pserver must not stall the master's loop (the
	// hung check runs there).
	sctx, cancel := context.WithTimeout(ctx, maxProbeTimeout)
	_, epochs, err := r.ps.Client().Steps(sctx)
	cancel()
	if err != nil {
		return nil // a pserver restarting: its return triggers its own rollback
	}
	epoch := r.driver.Epoch()
	if i, ahead := pserverAhead(epochs, epoch); ahead {
		return r.rollback(ctx, fmt.Sprintf("pserver-%d is in epoch %d, the master in %d (an interrupted rollback)", i, epochs[i], epoch), -1)
	}
	return nil
}

// rollback puts every pserver and the master at complete global checkpoint
// target (-1: the newest; 0: the start; older than the newest when the newest
// proved damaged) in a new epoch (see nextEpoch). The master's own state is
// loaded first, so a failure leaves the pservers untouched.
func (r *recovery) rollback(ctx context.Context, why string, target int64) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.rollbackLocked(ctx, why, target)
}

// rollbackLocked is rollback with r.mu held.
func (r *recovery) rollbackLocked(ctx context.Context, why string, target int64) error {
	r.driver.Pause()
	var g coord.GlobalCheckpoint
	if _, err := coord.GetJSON(ctx, r.cli, coord.GlobalCheckpointKey(r.job), &g); err != nil && !errors.Is(err, coord.ErrNotFound) {
		return err
	}
	requested := target
	target, exact := rollbackTarget(g, requested)
	if !exact {
		why = fmt.Sprintf("%s; step %d is not a complete global checkpoint (kept: %v), so the newest one below it", why, requested, g.Steps)
	}
	r.log.Warn("rolling back to a complete global checkpoint", "why", why, "step", target)
	state, err := r.loadState(ctx, target)
	if err != nil {
		return err
	}
	if err := r.ps.Refresh(ctx); err != nil {
		return err
	}
	_, epochs, err := r.ps.Client().Steps(ctx)
	if err != nil {
		return err
	}
	epoch := nextEpoch(r.driver.Epoch(), epochs)
	if err := r.ps.Client().Restore(ctx, target, epoch, r.lead.Rev()); err != nil {
		return err
	}
	if err := r.driver.Rollback(ctx, state, epoch); err != nil {
		return err
	}
	// Forget the abandoned history: its checkpoints are deleted as the new
	// one is written, so neither its global steps nor its marks may count.
	if err := r.lead.Commit(ctx, clientv3.OpPut(coord.GlobalCheckpointKey(r.job), coord.MustJSON(rolledBackGlobal(g, target))),
		coord.DeleteMarksFrom(r.job, target+1)); err != nil {
		return err
	}
	pass, _ := r.driver.Position()
	_ = coord.AppendEvent(ctx, r.cli, r.job, fmt.Sprintf("%s: job rolled back to global checkpoint step %d (pass %d), epoch %d", why, target, pass, epoch))
	return nil
}

// loadState reads the master's state checkpointed at step (nil at 0, the start).
func (r *recovery) loadState(ctx context.Context, step int64) (*core.State, error) {
	if step <= 0 {
		return nil, nil
	}
	snap, err := r.store.LoadStep(ctx, step)
	if err != nil {
		return nil, fmt.Errorf("master: rollback: %w", err)
	}
	state := &core.State{}
	if err := json.Unmarshal(snap.Meta, state); err != nil {
		return nil, fmt.Errorf("master: rollback: decode checkpoint of step %d: %w", step, err)
	}
	return state, nil
}
