package master

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/gtrain/gtrain/api"
	"github.com/gtrain/gtrain/internal/retry"
	"github.com/gtrain/gtrain/master/core"
	"github.com/gtrain/gtrain/program"
)

// saveTimeout bounds one save; a store that does not answer in that time
// makes this master stop so that a successor takes over.
const saveTimeout = 30 * time.Second

// deferredSaveEvery paces the background saves of deferred changes (sync
// step commits): the pace of the public progress record, so `status` is as
// fresh as when every commit was saved at once.
const deferredSaveEvery = core.ProgressEvery

// evalRetry is the pause between two attempts at a failed pass evaluation.
const evalRetry = time.Second

// ErrStopped is returned to a request whose change can no longer be saved:
// the driver's Run returned (leadership ended).
var ErrStopped = errors.New("master stopped")

// Evaluator runs at the end of every pass, outside the driver's lock: it
// reads the parameters at step (all of the pass applied), writes the model
// and returns the test metrics.
type Evaluator interface {
	EndPass(ctx context.Context, pass int, step int64) (api.Metrics, error)
}

// Driver serves the Core to concurrent trainers: it serialises requests on
// one lock, makes every change durable through a Store before acknowledging
// it (one save serves every change made meanwhile: group commit) but a
// deferred one (a sync step commit, saved in the background every
// deferredSaveEvery: no etcd write on a step's path), holds long polls until
// the state changes, and evaluates pass ends. Saves and evaluations run under
// Run's context, not a request's.
type Driver struct {
	store    Store
	eval     Evaluator
	clock    Clock
	mono     monotonicTime // the core's time (see monotonicTime)
	log      *slog.Logger
	longPoll time.Duration

	mu        sync.Mutex
	core      *core.Core
	changed   chan struct{}      // closed and replaced on every change
	saved     chan struct{}      // closed and replaced when a save ends or Run stops
	dirty     uint64             // changes made
	need      uint64             // the newest change not deferred: work is handed out once it is saved
	durable   uint64             // changes saved
	fatal     error              // a failed save or a dead model program: this master must stop
	stopped   bool               // Run returned: nothing more is saved
	passEnd   *core.PassEnd      // for Run to start evaluating
	endCancel context.CancelFunc // cancels the pass-end evaluation under way
	snapshots chan core.State    // sync: master states at checkpoint steps, for the writer
	wake      chan struct{}      // tells Run a save or a pass end is wanted
}

// NewDriver restores the state from store, or starts pass 0 when none is
// stored, and saves it; ctx bounds only that. Run must run for any change
// to be saved from then on.
func NewDriver(ctx context.Context, cfg core.CoreConfig, tasks *core.TaskSet, store Store, eval Evaluator, clock Clock, log *slog.Logger) (*Driver, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	meta, statuses, err := store.Load(ctx)
	if err != nil {
		return nil, fmt.Errorf("master: load state: %w", err)
	}
	mono := newMonotonicTime(clock)
	c, eff, err := core.NewCore(cfg, tasks, meta, statuses, mono.now(), log)
	if err != nil {
		return nil, err
	}
	d := &Driver{store: store, eval: eval, clock: clock, mono: mono, log: log, longPoll: cfg.LongPoll, core: c,
		changed: make(chan struct{}), saved: make(chan struct{}), snapshots: make(chan core.State, 1), wake: make(chan struct{}, 1)}
	d.mu.Lock()
	gen := d.applyLocked(core.Effects{Changed: eff.Changed})
	d.mu.Unlock()
	if gen > 0 {
		if err := d.save(ctx); err != nil {
			return nil, err
		}
	}
	eff.Changed = false // saved above
	d.mu.Lock()
	d.applyLocked(eff)
	d.mu.Unlock()
	return d, nil
}

// Run saves what requests wait for and starts pass-end evaluations, until
// ctx ends; then every change still unsaved fails with ErrStopped.
func (d *Driver) Run(ctx context.Context) {
	defer d.stop()
	background := time.NewTicker(deferredSaveEvery)
	defer background.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-d.wake:
		case <-background.C: // deferred changes, if any
		}
		if ctx.Err() != nil {
			return // a wake-up and the end together: the end wins
		}
		d.startPassEnd(ctx)
		_ = d.save(ctx) // a failure is fatal: Fatal() and every waiter report it
	}
}

func (d *Driver) stop() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.stopped = true
	d.savedLocked()
}

// applyLocked carries out eff but its save; it returns the change's
// generation to wait for (0: nothing changed, or a deferred change).
func (d *Driver) applyLocked(eff core.Effects) uint64 {
	var gen uint64
	if eff.Changed {
		gen = d.touchLocked()
		if eff.Deferred {
			gen = 0
		} else {
			d.need = gen
		}
	}
	if len(eff.Snapshots) > 0 {
		d.signal() // a checkpointed step: its state is saved at once, waited for or not
	}
	for _, st := range eff.Snapshots {
		select {
		case d.snapshots <- st:
		default:
			d.log.Warn("master checkpoint skipped: the previous one is still being written", "step", st.Meta.Step)
		}
	}
	if eff.CancelPassEnd {
		d.passEnd = nil
		if d.endCancel != nil {
			d.endCancel()
		}
	}
	if eff.PassEnd != nil {
		d.passEnd = eff.PassEnd
		d.signal()
	}
	if eff.Fail != "" {
		d.wakeLocked() // the leader fails the job (Failed)
	}
	return gen
}

func (d *Driver) touchLocked() uint64 {
	d.dirty++
	d.wakeLocked()
	return d.dirty
}

// wakeLocked wakes everyone waiting for a change (Changed, long polls).
func (d *Driver) wakeLocked() {
	close(d.changed)
	d.changed = make(chan struct{})
}

// signal wakes Run; a wake already pending covers this one.
func (d *Driver) signal() {
	select {
	case d.wake <- struct{}{}:
	default:
	}
}

// save commits every change made so far, if one is unsaved. Only NewDriver
// (before Run) and Run call it, so saves never overlap.
func (d *Driver) save(ctx context.Context) error {
	d.mu.Lock()
	if d.fatal != nil || d.durable >= d.dirty {
		d.mu.Unlock()
		return nil
	}
	target := d.dirty
	s := d.core.TakeSave(d.mono.now(), d.clock.Now())
	d.mu.Unlock()

	sctx, cancel := context.WithTimeout(ctx, saveTimeout)
	err := d.store.Save(sctx, s.Meta, s.Changed, s.Progress)
	cancel()

	d.mu.Lock()
	defer d.mu.Unlock()
	if err != nil {
		d.haltLocked(fmt.Errorf("master: save state: %w", err))
		return d.fatal
	}
	d.savedLocked()
	d.durable = target
	return nil
}

// savedLocked wakes everyone waiting for a save to end (commit).
func (d *Driver) savedLocked() {
	close(d.saved)
	d.saved = make(chan struct{})
}

// commit waits until every change up to gen is saved. The save serves every
// change made so far, not only the caller's: a caller that goes away (a
// trainer killed mid-request) stops waiting but does not cancel it.
func (d *Driver) commit(ctx context.Context, gen uint64) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	for {
		switch {
		case d.fatal != nil:
			return d.fatal
		case d.durable >= gen:
			return nil
		case d.stopped:
			return ErrStopped
		}
		d.signal()
		saved := d.saved
		d.mu.Unlock()
		select {
		case <-saved:
		case <-ctx.Done():
			d.mu.Lock()
			return ctx.Err()
		}
		d.mu.Lock()
	}
}

// change applies one change of the core and waits until it is saved.
func (d *Driver) change(ctx context.Context, f func(now time.Time) core.Effects) error {
	d.mu.Lock()
	gen := d.applyLocked(f(d.mono.now()))
	d.mu.Unlock()
	if gen == 0 {
		return nil
	}
	return d.commit(ctx, gen)
}

// waitChange blocks until changed is closed (true) or the poll ends (false).
func waitChange(poll context.Context, changed <-chan struct{}) bool {
	select {
	case <-changed:
		return true
	case <-poll.Done():
		return false
	}
}

// GetStep (sync) returns what trainer computes at step, waiting up to the
// long poll for it to be planned (see Core.Step).
func (d *Driver) GetStep(ctx context.Context, trainer int, step, epoch int64) (core.Work, error) {
	if err := d.core.CheckTrainer(trainer); err != nil {
		return core.Work{}, err
	}
	poll, cancel := context.WithTimeout(ctx, d.longPoll)
	defer cancel()
	for {
		d.mu.Lock()
		if d.fatal != nil {
			defer d.mu.Unlock()
			return core.Work{}, d.fatal
		}
		w := d.core.Step(trainer, step, epoch, d.mono.now())
		gen, durable, changed := d.need, d.durable, d.changed
		d.mu.Unlock()
		switch w.Status {
		case api.WorkStatus_WORK_DONE, api.WorkStatus_WORK_READY:
			if durable < gen {
				// e.g. a new pass's plan, or the job's end: hand out nothing the
				// store does not hold yet. A trainer told "done" exits for good,
				// so a successor that found the job unfinished would roll it back
				// and wait for trainers that are gone. Deferred step commits are
				// not waited for: a new master recomputes them (Core.CatchUp).
				if err := d.commit(ctx, gen); err != nil {
					return core.Work{}, err
				}
			}
			return w, nil
		}
		step, epoch = w.Step, w.Epoch
		if !waitChange(poll, changed) {
			return w, ctx.Err()
		}
	}
}

// StepDone (sync) records that trainer's gradient of step reached every
// pserver (see Core.StepDone). A step it commits is saved in the background;
// only a pass end is saved before the answer.
func (d *Driver) StepDone(ctx context.Context, trainer, mb int, step, epoch int64, lossSum float64, records int64) error {
	if err := d.core.CheckTrainer(trainer); err != nil {
		return err
	}
	d.mu.Lock()
	if d.fatal != nil || d.stopped {
		// A stopped master acknowledges nothing: its deferred commits are
		// never saved (the trainer finds the successor, which catches up).
		defer d.mu.Unlock()
		return cmp.Or(d.fatal, ErrStopped)
	}
	eff, err := d.core.StepDone(trainer, mb, step, epoch, lossSum, records, d.mono.now())
	gen := d.applyLocked(eff)
	d.mu.Unlock()
	if err != nil || gen == 0 {
		return err
	}
	return d.commit(ctx, gen)
}

// GetTask (async) reports the previous task and asks for the next one,
// waiting up to the long poll for one. The report and the next dispatch are
// saved in one commit: one etcd transaction per task for a lone trainer.
func (d *Driver) GetTask(ctx context.Context, trainer, finished, failed int, lossSum float64, records int64) (core.Work, error) {
	return d.GetTaskPass(ctx, trainer, CurrentPass, finished, failed, lossSum, records)
}

// CurrentPass, as GetTaskPass's pass, reports tasks of the current pass.
const CurrentPass = -1

// GetTaskPass is GetTask reporting tasks handed out in pass (see
// Core.ReportPass): a trainer names the pass of the task it reports, so a
// repeat sent after the pass ended does not count in the next one.
func (d *Driver) GetTaskPass(ctx context.Context, trainer, pass, finished, failed int, lossSum float64, records int64) (core.Work, error) {
	if err := d.core.CheckTrainer(trainer); err != nil {
		return core.Work{}, err
	}
	d.mu.Lock()
	if pass == CurrentPass {
		pass, _ = d.core.Position()
	}
	gen := d.applyLocked(d.core.ReportPass(trainer, pass, finished, failed, lossSum, records))
	d.mu.Unlock()
	poll, cancel := context.WithTimeout(ctx, d.longPoll)
	defer cancel()
	for {
		d.mu.Lock()
		if d.fatal != nil {
			defer d.mu.Unlock()
			return core.Work{}, d.fatal
		}
		w, eff := d.core.Task(trainer, d.mono.now())
		if g := d.applyLocked(eff); g > 0 {
			gen = g
		}
		changed, need := d.changed, d.need
		d.mu.Unlock()
		switch w.Status {
		case api.WorkStatus_WORK_DONE:
			// Every change so far, this call's report and the job's end (saved
			// by endPass, not by this call) among them, must be durable before
			// a trainer exits for good (see GetStep). need covers gen: it only
			// grows.
			return w, d.commit(ctx, need)
		case api.WorkStatus_WORK_READY:
			if err := d.commit(ctx, gen); err != nil {
				return core.Work{}, err
			}
			return w, nil
		}
		if gen > 0 {
			// Nothing to hand out yet: make the report durable before waiting.
			if err := d.commit(ctx, gen); err != nil {
				return core.Work{}, err
			}
			gen = 0
		}
		if !waitChange(poll, changed) {
			return w, ctx.Err()
		}
	}
}

// Tick takes back (async) tasks whose trainer went silent past the timeout.
func (d *Driver) Tick(ctx context.Context) error {
	return d.change(ctx, d.core.Tick)
}

// TrainerLost gives a vanished trainer's tasks (async) back at once.
func (d *Driver) TrainerLost(ctx context.Context, trainer int) error {
	return d.change(ctx, func(time.Time) core.Effects { return d.core.TrainerLost(trainer) })
}

// TrainerUp records that trainer's lease is alive: its tasks are renewed
// instead of timing out.
func (d *Driver) TrainerUp(trainer int) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.core.TrainerUp(trainer)
}

// TrainersLive sets the live trainers to those listed and gives back the
// tasks of any other (see Core.TrainersLive).
func (d *Driver) TrainersLive(ctx context.Context, trainers []int) error {
	return d.change(ctx, func(time.Time) core.Effects { return d.core.TrainersLive(trainers) })
}

// FlushProgress saves the progress record if a save skipped it.
func (d *Driver) FlushProgress(ctx context.Context) error {
	if d.Fatal() != nil {
		return nil
	}
	return d.change(ctx, func(time.Time) core.Effects { return d.core.FlushProgress() })
}

// Flush saves every change made so far, deferred ones included, and waits
// for it (tests wait for a deferred save with it; a master that stops
// leaves unsaved step commits to its successor's catch-up).
func (d *Driver) Flush(ctx context.Context) error {
	d.mu.Lock()
	gen := d.dirty
	d.mu.Unlock()
	return d.commit(ctx, gen)
}

// CatchUp (sync) commits the steps the pservers applied past the stored
// state (see Core.CatchUp) and saves them; ErrBadStep: they are not in this
// master's history.
func (d *Driver) CatchUp(ctx context.Context, step int64) error {
	d.mu.Lock()
	eff, err := d.core.CatchUp(step, d.mono.now())
	if err == nil {
		eff.Deferred = false // a recovery is saved before trainers are served
	}
	gen := d.applyLocked(eff)
	d.mu.Unlock()
	if err != nil || gen == 0 {
		return err
	}
	return d.commit(ctx, gen)
}

// Pause stops handing out steps and accepting reports while a rollback is
// prepared; the pause is not saved.
func (d *Driver) Pause() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.applyLocked(d.core.Pause())
}

// PauseUnlessFinishing pauses (see Pause) unless the job finished or
// evaluates its last pass (Core.Finishing): a re-shard then gives up.
func (d *Driver) PauseUnlessFinishing() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.core.Finishing() {
		return false
	}
	d.applyLocked(d.core.Pause())
	return true
}

// Rollback puts the master back at a complete global checkpoint (see
// Core.Rollback) and saves it.
func (d *Driver) Rollback(ctx context.Context, state *core.State, epoch int64) error {
	d.mu.Lock()
	eff, err := d.core.Rollback(state, epoch, d.mono.now())
	gen := d.applyLocked(eff)
	d.mu.Unlock()
	if err != nil {
		return err
	}
	return d.commit(ctx, gen)
}

// startPassEnd starts evaluating the pass end the core asked for, if any.
func (d *Driver) startPassEnd(ctx context.Context) {
	d.mu.Lock()
	defer d.mu.Unlock()
	end := d.passEnd
	if end == nil {
		return
	}
	d.passEnd = nil
	ectx, cancel := context.WithCancel(ctx)
	d.endCancel = cancel
	go d.endPass(ectx, *end)
}

// endPass evaluates end, then advances the core to the next pass and saves it.
func (d *Driver) endPass(ctx context.Context, end core.PassEnd) {
	metrics, ok := d.evaluate(ctx, end)
	if !ok {
		return // cancelled: a rollback or the end of this master
	}
	d.mu.Lock()
	gen := d.applyLocked(d.core.PassEnded(end, metrics, d.mono.now()))
	d.mu.Unlock()
	if gen == 0 {
		return
	}
	// A rollback cancelling ctx now must not make the saved pass end look failed.
	if err := d.commit(context.WithoutCancel(ctx), gen); err != nil {
		d.log.Error("save after pass", "err", err)
	}
}

// evaluate runs the evaluator until it succeeds or ctx ends (ok false). A
// model that diverged fails the job; a model write that fails is the
// operator's warning while it is retried (see ModelWriteError); a model
// program that died stops this master (halt).
func (d *Driver) evaluate(ctx context.Context, end core.PassEnd) (metrics api.Metrics, ok bool) {
	err := retry.Do(ctx, retry.Policy{Initial: evalRetry}, func() error {
		var err error
		metrics, err = d.eval.EndPass(ctx, end.Pass, end.Step)
		if ctx.Err() != nil {
			return retry.Permanent(ctx.Err())
		}
		var diverged *DivergedError
		var write *ModelWriteError
		switch {
		case errors.As(err, &diverged):
			d.apply(func() core.Effects { return d.core.PassDiverged(end, diverged.What) })
			return retry.Permanent(err)
		case errors.As(err, &write):
			d.apply(func() core.Effects { return d.core.PassEndWarning(end, write.Warning()) })
		case program.IsCrash(err):
			// The model program died (a signal, the OOM killer, an exit):
			// every later call of it returns the same error, so a retry
			// would wait for ever. This master ends instead, and its agent
			// restarts it against the crash budget, as a trainer whose
			// program died; its successor starts a new program and
			// evaluates this pass again.
			d.halt(fmt.Errorf("master: end of pass %d evaluation: %w", end.Pass, err))
			return retry.Permanent(err)
		}
		return err
	}, retry.OnRetry(func(attempt int, err error, _ time.Duration) {
		d.log.Warn("end of pass evaluation failed; retrying", "pass", end.Pass, "attempt", attempt, "err", err)
	}))
	return metrics, err == nil
}

// Done reports whether training finished and every change is saved: the
// job is marked SUCCEEDED only once its last pass (samples, history) is in
// etcd, never while that save is still under way.
func (d *Driver) Done() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.core.Done() && d.durable >= d.dirty
}

// apply makes a change of the core (f, under the lock) that nobody waits for.
func (d *Driver) apply(f func() core.Effects) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.applyLocked(f())
}

// Failed is the reason the job must end FAILED ("": it need not): it diverged.
func (d *Driver) Failed() string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.core.Failed()
}

// Warning is what an operator must fix for the pass end under way to
// finish ("": nothing).
func (d *Driver) Warning() string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.core.Warning()
}

// halt stops this master with err (haltLocked).
func (d *Driver) halt(err error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.haltLocked(err)
}

// haltLocked makes err this master's Fatal error, unless one already is (a
// failed save or a dead model program: the first cause is kept), and wakes
// whoever waits: on Changed (the leader, which then ends) and on a save
// (commit, which then returns it: no save comes once fatal is set).
func (d *Driver) haltLocked(err error) {
	if d.fatal == nil {
		d.fatal = err
	}
	d.wakeLocked()
	d.savedLocked()
}

// Fatal returns the error that stopped this master, if any.
func (d *Driver) Fatal() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.fatal
}

// Changed returns a channel closed at the next state change.
func (d *Driver) Changed() <-chan struct{} {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.changed
}

// Snapshots delivers the master's state at each checkpointed step.
func (d *Driver) Snapshots() <-chan core.State { return d.snapshots }

// Epoch is the current rollback epoch.
func (d *Driver) Epoch() int64 {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.core.Epoch()
}

// Position returns the pass and the committed step.
func (d *Driver) Position() (int, int64) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.core.Position()
}

// Stalled reports (sync) a step that has waited longer than after for its
// trainers (see Core.Stalled).
func (d *Driver) Stalled(after time.Duration) (step int64, missing []int, stalled bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.core.Stalled(after, d.mono.now())
}

// CheckpointNext is Core.CheckpointNext under the driver's lock.
func (d *Driver) CheckpointNext() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.core.CheckpointNext()
}
