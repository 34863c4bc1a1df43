package recovery

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/gtrain/gtrain/checkpoint"
	"github.com/gtrain/gtrain/coord/schema"
	"github.com/gtrain/gtrain/master/core"
	"github.com/gtrain/gtrain/pserver/client"
)

// Recovery keeps a sync job restorable: it writes the master's state at every
// checkpointed step, declares a global checkpoint once every participant has
// its part of a step on disk, and rolls the whole job back to the newest
// complete one when a pserver comes back from a crash.
type Recovery struct {
	driver      Driver
	checkpoints CheckpointStore
	states      StateCheckpoints // the master's own checkpoints
	layouts     LayoutStore
	events      Events
	ps          PserverProber
	log         *slog.Logger
	keep        int
	leases      map[int]int64 // pserver index -> lease of the incarnation last seen ready (under mu once started)
	mu          sync.Mutex    // one rollback or re-shard at a time
}

// New returns the recovery of a sync job that keeps keep global checkpoints.
func New(p Ports, keep int, log *slog.Logger) *Recovery {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Recovery{driver: p.Driver, checkpoints: p.Checkpoints, states: p.States, layouts: p.Layouts,
		events: p.Events, ps: p.Pservers, log: log, keep: keep, leases: map[int]int64{}}
}

// Start writes checkpoints and tracks global ones from now on, rolls the job
// back if the pservers and the stored state disagree, then watches for
// pservers coming back from a crash. stop ends the master when the tracking
// or a rollback fails in the background.
func (r *Recovery) Start(ctx context.Context, stop context.CancelFunc) error {
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
func (r *Recovery) writeCheckpoints(ctx context.Context) {
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
		rec, err := r.states.Save(ctx, checkpoint.Snapshot{Index: 0, Step: st.Meta.Step, Meta: meta})
		if err != nil {
			r.log.Error("master checkpoint failed; training goes on", "step", st.Meta.Step, "err", err)
			continue
		}
		if err := r.checkpoints.MarkMaster(ctx, rec); err != nil {
			r.log.Error("master checkpoint mark", "err", err)
		}
	}
}

// trackGlobal declares step S the global checkpoint once the master and every
// pserver have marked S. It returns when the watch ends (an error unless ctx
// is done: a master that stops tracking checkpoints must not go on).
func (r *Recovery) trackGlobal(ctx context.Context) error {
	err := r.checkpoints.WatchMarks(ctx, func(step int64) {
		if err := r.maybeDeclare(ctx, step); err != nil {
			r.log.Error("declare global checkpoint", "step", step, "err", err)
		}
	})
	if ctx.Err() != nil {
		return nil
	}
	if err == nil {
		err = errors.New("watch of checkpoint marks ended")
	}
	return err
}

// maybeDeclare makes step the newest global checkpoint if every participant
// marked it. The record is re-read each time: a rollback rewrites it.
func (r *Recovery) maybeDeclare(ctx context.Context, step int64) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	global, _, err := r.checkpoints.Global(ctx)
	if err != nil {
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
	if err := r.checkpoints.Declare(ctx, global); err != nil {
		return err
	}
	r.log.Info("global checkpoint complete", "step", step)
	return nil
}

// watchPservers rolls back when a pserver comes back from a crash: a new
// incarnation (lease) of an index announces itself ready, restored at a
// complete global checkpoint, while the others went on.
func (r *Recovery) watchPservers(ctx context.Context, rev int64) error {
	err := r.ps.WatchRegistrations(ctx, rev, func(reg Registration) error {
		if !reg.Ready || r.knownIncarnation(reg) {
			return nil
		}
		why := fmt.Sprintf("pserver-%d restarted (pid %d)", reg.Index, reg.PID)
		return r.rollback(ctx, why, reg.RestoredStep)
	})
	if ctx.Err() != nil {
		return nil
	}
	if err == nil {
		err = errors.New("watch of pservers ended")
	}
	return err
}

// RequestRollback serves a trainer that found the pservers at different
// steps; a rollback already done since its epoch answers it.
func (r *Recovery) RequestRollback(ctx context.Context, epoch int64, why string) error {
	if r.driver.Epoch() > epoch {
		return nil
	}
	return r.rollback(ctx, why, -1)
}

// readyLeases records the incarnations serving now; it returns the etcd
// revision to watch from.
func (r *Recovery) readyLeases(ctx context.Context) (int64, error) {
	regs, rev, err := r.ps.Registrations(ctx)
	if err != nil {
		return 0, err
	}
	r.leases = map[int]int64{}
	for _, reg := range regs {
		if reg.Ready {
			r.leases[reg.Index] = reg.Lease
		}
	}
	return rev, nil
}

// checkConsistent catches the master up with the steps the pservers applied
// since its state was last saved, and rolls back at start when the pservers
// and the stored master state do not describe one history (e.g. everything
// restarted after an agent crash, each pserver from a global checkpoint; or
// a master died in the middle of a rollback).
func (r *Recovery) checkConsistent(ctx context.Context) error {
	steps, epochs, err := r.ps.Steps(ctx)
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
			_ = r.events.Event(ctx, fmt.Sprintf("master caught up from step %d to step %d: the steps the pservers applied since the last save, committed from the plan", at, steps[0]))
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

// CheckEpochs rolls back when a pserver is in a newer epoch than the master:
// a rollback was cut short (its master died after restoring some pservers).
// The question is bounded by timeout: a stopped pserver must not stall the
// master's loop (the hung check runs there).
func (r *Recovery) CheckEpochs(ctx context.Context, timeout time.Duration) error {
	sctx, cancel := context.WithTimeout(ctx, timeout)
	_, epochs, err := r.ps.Steps(sctx)
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
// loaded first, so a failure leaves the pservers untouched. When a file of
// target cannot be loaded (damaged, missing, or its sha256 no longer the
// one recorded), the whole job falls back to the previous kept global
// checkpoint, and so on down to the start.
func (r *Recovery) rollback(ctx context.Context, why string, target int64) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.rollbackLocked(ctx, why, target)
}

// rollbackLocked is rollback with r.mu held.
func (r *Recovery) rollbackLocked(ctx context.Context, why string, target int64) error {
	if r.driver.Done() {
		// A finished job is not rolled back (the core refuses it: its model
		// is written and its end saved). Restoring the pservers first, as a
		// rollback does, would put them in an epoch the master never
		// reaches, and each successor would try again, for ever.
		r.log.Info("the job finished; no rollback", "why", why)
		return nil
	}
	r.driver.Pause()
	g, _, err := r.checkpoints.Global(ctx)
	if err != nil {
		return err
	}
	requested := target
	target, exact := rollbackTarget(g, requested)
	if !exact {
		why = fmt.Sprintf("%s; step %d is not a complete global checkpoint (kept: %v), so the newest one below it", why, requested, g.Steps)
	}
	for {
		err := r.rollbackTo(ctx, g, why, target)
		older, ok := olderTarget(g, target)
		if err == nil || !unusable(err) || !ok {
			return err
		}
		// One participant's file of target is not what its record names
		// (or is gone): every participant goes back to the previous
		// recorded global checkpoint instead, so all restore one step.
		_ = r.events.Event(ctx, fmt.Sprintf("global checkpoint step %d not restored: %v; falling back to the previous recorded one, step %d", target, err, older))
		why = fmt.Sprintf("%s; step %d could not be restored", why, target)
		target = older
	}
}

// rollbackTo carries out one rollback to complete global checkpoint target
// of record g.
func (r *Recovery) rollbackTo(ctx context.Context, g schema.GlobalCheckpoint, why string, target int64) error {
	r.log.Warn("rolling back to a complete global checkpoint", "why", why, "step", target)
	state, err := r.loadState(ctx, target)
	if err != nil {
		return err
	}
	if err := r.ps.Refresh(ctx); err != nil {
		return err
	}
	_, epochs, err := r.ps.Steps(ctx)
	if err != nil {
		return err
	}
	epoch := nextEpoch(r.driver.Epoch(), epochs)
	if err := r.ps.Restore(ctx, target, epoch); err != nil {
		return err
	}
	if err := r.driver.Rollback(ctx, state, epoch); err != nil {
		return err
	}
	// Forget the abandoned history: its checkpoints are deleted as the new
	// one is written, so neither its global steps nor its marks may count.
	if err := r.checkpoints.RollBack(ctx, rolledBackGlobal(g, target)); err != nil {
		return err
	}
	pass, _ := r.driver.Position()
	_ = r.events.Event(ctx, fmt.Sprintf("%s: job rolled back to global checkpoint step %d (pass %d), epoch %d", why, target, pass, epoch))
	return nil
}

// unusable reports whether a rollback failed because a checkpoint file of
// its step cannot be loaded (the master's own, or a pserver's): an older
// step's may be.
func unusable(err error) bool {
	return checkpoint.Unusable(err) || errors.Is(err, client.ErrCheckpointUnusable)
}

// loadState reads the master's state checkpointed at step (nil at 0, the start).
func (r *Recovery) loadState(ctx context.Context, step int64) (*core.State, error) {
	if step <= 0 {
		return nil, nil
	}
	snap, err := r.states.LoadStep(ctx, step)
	if err != nil {
		return nil, fmt.Errorf("master: rollback: %w", err)
	}
	state := &core.State{}
	if err := json.Unmarshal(snap.Meta, state); err != nil {
		return nil, fmt.Errorf("master: rollback: decode checkpoint of step %d: %w", step, err)
	}
	return state, nil
}
