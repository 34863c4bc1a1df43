package master

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"sync"
	"time"

	"github.com/gtrain/gtrain/api"
	"github.com/gtrain/gtrain/coord"
)

// progressEvery bounds how often the public progress record is rewritten: it
// is read by people and status polls, not needed for recovery.
const progressEvery = 250 * time.Millisecond

// saveTimeout bounds one save; a store that does not answer in that time
// makes this master stop so that a successor takes over.
const saveTimeout = 30 * time.Second

// Sentinel errors of the core.
var (
	ErrStaleState = errors.New("stored master state does not match the training data")
	ErrBadTrainer = errors.New("trainer ID out of range")
	ErrBadStep    = errors.New("step out of order")
)

// Evaluator runs at the end of every pass, outside the core's lock: it reads
// the parameters at step (all of the pass applied), writes the model and
// returns the test metrics.
type Evaluator interface {
	EndPass(ctx context.Context, pass int, step int64) (api.Metrics, error)
}

// CoreConfig configures the core.
type CoreConfig struct {
	Sync     bool
	Trainers int
	Batch    int
	Passes   int
	Queue    QueueConfig
	ModelDir string
	// LongPoll bounds how long a request waits for work before answering WAIT.
	LongPoll time.Duration
	// Sync checkpoints: after every CheckpointSteps steps (0: off), or the
	// first step planned CheckpointEvery after the previous one (0: off), and
	// at every pass end.
	CheckpointSteps int64
	CheckpointEvery time.Duration
}

// Validate names the bad field.
func (c CoreConfig) Validate() error {
	switch {
	case c.Trainers < 1:
		return fmt.Errorf("master: Trainers must be >= 1, got %d", c.Trainers)
	case c.Batch < 1:
		return fmt.Errorf("master: Batch must be >= 1, got %d", c.Batch)
	case c.Passes < 1:
		return fmt.Errorf("master: Passes must be >= 1, got %d", c.Passes)
	case c.LongPoll <= 0:
		return fmt.Errorf("master: LongPoll must be > 0, got %s", c.LongPoll)
	}
	return c.Queue.Validate()
}

// Work is the answer to a trainer asking for work.
type Work struct {
	Status     api.WorkStatus
	Pass       int
	Step       int64   // sync
	Slices     []Slice // sync
	Checkpoint bool    // sync: the pservers checkpoint after applying Step
	Epoch      int64   // sync
	Task       Task    // async
}

// State is the master's whole state at a step: what a sync checkpoint keeps
// so that a rollback can put the master back at that step.
type State struct {
	Meta     Meta         `json:"meta"`
	Statuses []TaskStatus `json:"statuses"`
}

type stepReport struct {
	loss    float64
	records int64
}

// Core is the master's logic: the queue, the sync plan, accounting, and
// persistence of every change before it is acknowledged.
type Core struct {
	cfg   CoreConfig
	tasks *TaskSet
	store Store
	eval  Evaluator
	clock Clock
	log   *slog.Logger

	mu      sync.Mutex
	q       *Queue
	meta    Meta
	plan    *PassPlan                    // sync: the current pass
	reports map[int64]map[int]stepReport // sync: reports by step, then trainer
	ending  bool                         // a pass end is being evaluated
	paused  bool                         // sync: a rollback is under way; hand out nothing

	checkpointAfter map[int64]bool     // sync: decided checkpoint flags by step
	lastCheckpoint  time.Time          // sync: when the last timed checkpoint was decided
	snapshots       chan State         // sync: master states at checkpoint steps, for the writer
	changed         chan struct{}      // closed and replaced on every change
	dirty           uint64             // changes made
	durable         uint64             // changes saved
	fatal           error              // a failed save: this master must stop
	saveAll         bool               // the next save writes every task (after a rollback)
	endCancel       context.CancelFunc // cancels the pass-end evaluation under way
	lastCommit      time.Time          // sync: when a step was last committed

	commitMu sync.Mutex // one Save at a time; waiting writers ride along (group commit)
	// progress (the public view) is written at most every progressEvery, and
	// whenever the pass changes, training ends or a rollback happens.
	progressAt    time.Time
	progressPass  int
	progressStale bool // a save skipped the progress record
	endCtx        context.Context
}

// NewCore restores the state from store, or starts pass 0 when none is stored.
func NewCore(ctx context.Context, cfg CoreConfig, tasks *TaskSet, store Store, eval Evaluator, clock Clock, log *slog.Logger) (*Core, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	c := &Core{cfg: cfg, tasks: tasks, store: store, eval: eval, clock: clock, log: log,
		reports: map[int64]map[int]stepReport{}, changed: make(chan struct{}), endCtx: ctx,
		checkpointAfter: map[int64]bool{}, snapshots: make(chan State, 1), lastCheckpoint: clock.Now()}
	meta, statuses, err := store.Load(ctx)
	if err != nil {
		return nil, fmt.Errorf("master: load state: %w", err)
	}
	if meta == nil {
		if c.q, err = NewQueue(cfg.Queue, tasks.Tasks); err != nil {
			return nil, err
		}
		c.meta = Meta{Tasks: len(tasks.Tasks)}
		c.dirty = 1
	} else {
		if meta.Tasks != len(tasks.Tasks) {
			return nil, fmt.Errorf("master: %d tasks stored, %d cut from the data: %w", meta.Tasks, len(tasks.Tasks), ErrStaleState)
		}
		if c.q, err = RestoreQueue(cfg.Queue, tasks.Tasks, meta.Pass, statuses); err != nil {
			return nil, fmt.Errorf("master: restore: %w", err)
		}
		c.meta = *meta
		log.Info("master state restored", "pass", meta.Pass, "step", meta.Step, "counts", c.q.Counts())
	}
	if cfg.Sync && !c.meta.Done {
		c.plan = c.passPlanLocked()
	}
	if err := c.persist(ctx, c.dirty); err != nil {
		return nil, err
	}
	c.mu.Lock()
	c.maybeEndPassLocked()
	c.mu.Unlock()
	return c, nil
}

// passPlanLocked lays out the current pass in queue order (failed tasks are left out).
func (c *Core) passPlanLocked() *PassPlan {
	var sts []TaskStatus
	for _, s := range c.q.Statuses() {
		if s.State != Failed {
			sts = append(sts, s)
		}
	}
	sort.SliceStable(sts, func(i, j int) bool { return sts[i].Order < sts[j].Order })
	ordered := make([]Task, 0, len(sts))
	for _, s := range sts {
		t, _ := c.q.Task(s.ID)
		ordered = append(ordered, t)
	}
	return NewPassPlan(c.meta.Pass, c.meta.PassStartStep, c.cfg.Trainers, c.cfg.Batch, ordered, c.tasks.ChunkRecords)
}

// Done reports whether training finished.
func (c *Core) Done() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.meta.Done
}

// Fatal returns the error that stopped this master, if any.
func (c *Core) Fatal() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.fatal
}

// Changed returns a channel closed at the next state change.
func (c *Core) Changed() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.changed
}

func (c *Core) touchLocked() uint64 {
	c.dirty++
	close(c.changed)
	c.changed = make(chan struct{})
	return c.dirty
}

// persist makes every change up to gen durable. Concurrent callers queue on
// commitMu; the first to get it saves everything changed so far, so the
// others find their change already durable: one etcd commit serves many.
func (c *Core) persist(ctx context.Context, gen uint64) error {
	c.commitMu.Lock()
	defer c.commitMu.Unlock()
	c.mu.Lock()
	if c.fatal != nil || c.durable >= gen {
		err := c.fatal
		c.mu.Unlock()
		return err
	}
	target := c.dirty
	_, changed := c.q.TakeChanges()
	now := c.clock.Now()
	var progress any
	if c.saveAll || c.meta.Done || c.meta.Pass != c.progressPass || now.Sub(c.progressAt) >= progressEvery {
		progress, c.progressAt, c.progressPass = c.progressLocked(), now, c.meta.Pass
	}
	c.progressStale = progress == nil
	if c.saveAll {
		changed, c.saveAll = c.q.Statuses(), false
	}
	if len(changed) > 0 && len(changed) == len(c.tasks.Tasks) {
		c.meta.Slot = 1 - c.meta.Slot // a full rewrite: into the other copy
	}
	meta := c.meta
	meta.SamplesApplied = append([]int64(nil), c.meta.SamplesApplied...)
	c.mu.Unlock()

	// The save serves every change made so far, not only the caller's: a
	// caller that goes away (a trainer killed mid-request) must not cancel it.
	sctx, cancel := context.WithTimeout(c.endCtx, saveTimeout)
	err := c.store.Save(sctx, meta, changed, progress)
	cancel()

	c.mu.Lock()
	defer c.mu.Unlock()
	if err != nil {
		c.fatal = fmt.Errorf("master: save state: %w", err)
		close(c.changed)
		c.changed = make(chan struct{})
		return c.fatal
	}
	c.durable = target
	return nil
}

func (c *Core) progressLocked() coord.ProgressRecord {
	n := c.q.Counts()
	return coord.ProgressRecord{
		Pass: c.meta.Pass, Passes: c.cfg.Passes, Step: c.meta.Step,
		Tasks:          api.TaskCounts{Todo: n.Todo, Pending: n.Pending, Done: n.Done, Failed: n.Failed},
		SamplesApplied: append([]int64{}, c.meta.SamplesApplied...),
		Metrics:        c.meta.Metrics, ModelDir: c.cfg.ModelDir, Epoch: c.meta.Epoch, Updated: c.clock.Now().UTC(),
	}
}

// wait blocks until the state changes or the deadline passes.
func (c *Core) wait(ctx context.Context, ch <-chan struct{}, deadline time.Time) bool {
	t := time.NewTimer(time.Until(deadline))
	defer t.Stop()
	select {
	case <-ch:
		return true
	case <-t.C:
	case <-ctx.Done():
	}
	return false
}

// GetStep (sync) returns what trainer computes at step. A trainer of an
// older epoch (before a rollback), or asking for a step already committed (a
// restarted trainer), is sent to the step the job is at.
func (c *Core) GetStep(ctx context.Context, trainer int, step, epoch int64) (Work, error) {
	if trainer < 0 || trainer >= c.cfg.Trainers {
		return Work{}, fmt.Errorf("trainer %d of %d: %w", trainer, c.cfg.Trainers, ErrBadTrainer)
	}
	deadline := time.Now().Add(c.cfg.LongPoll)
	for {
		c.mu.Lock()
		if c.fatal != nil {
			c.mu.Unlock()
			return Work{}, c.fatal
		}
		if c.meta.Done {
			c.mu.Unlock()
			return Work{Status: api.WorkStatus_WORK_DONE, Pass: c.cfg.Passes, Epoch: c.meta.Epoch}, nil
		}
		if epoch != c.meta.Epoch {
			step, epoch = c.meta.Step, c.meta.Epoch
		}
		step = max(step, c.meta.Step)
		if !c.paused && c.plan.Contains(step) {
			w := Work{Status: api.WorkStatus_WORK_READY, Pass: c.plan.Pass, Step: step, Slices: c.plan.Slices(step, trainer),
				Checkpoint: c.checkpointAfterLocked(step), Epoch: c.meta.Epoch}
			gen, durable := c.dirty, c.durable
			c.mu.Unlock()
			if durable < gen {
				// e.g. a new pass's plan: hand out nothing the store does not hold yet.
				if err := c.persist(ctx, gen); err != nil {
					return Work{}, err
				}
			}
			return w, nil
		}
		ch := c.changed
		c.mu.Unlock()
		if !c.wait(ctx, ch, deadline) {
			return Work{Status: api.WorkStatus_WORK_WAIT, Step: step, Epoch: epoch}, ctx.Err()
		}
	}
}

// checkpointAfterLocked decides, once per step, whether the pservers
// checkpoint after applying it. Every trainer gets the same answer, so every
// pserver snapshots the same step.
func (c *Core) checkpointAfterLocked(step int64) bool {
	if v, ok := c.checkpointAfter[step]; ok {
		return v
	}
	now := c.clock.Now()
	v := step+1 == c.plan.EndStep() ||
		(c.cfg.CheckpointSteps > 0 && (step+1)%c.cfg.CheckpointSteps == 0) ||
		(c.cfg.CheckpointEvery > 0 && now.Sub(c.lastCheckpoint) >= c.cfg.CheckpointEvery)
	if v {
		c.lastCheckpoint = now
	}
	c.checkpointAfter[step] = v
	for s := range c.checkpointAfter {
		if s < c.meta.Step-2 {
			delete(c.checkpointAfter, s)
		}
	}
	return v
}

// Snapshots delivers the master's state at each checkpointed step.
func (c *Core) Snapshots() <-chan State { return c.snapshots }

// Epoch is the current rollback epoch.
func (c *Core) Epoch() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.meta.Epoch
}

// Position returns the pass and the committed step.
func (c *Core) Position() (int, int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.meta.Pass, c.meta.Step
}

// StepDone (sync) records that trainer's gradient of step reached every
// pserver. When every trainer reported, the step is committed: its records
// are accounted, finished tasks marked done, and the state saved.
func (c *Core) StepDone(ctx context.Context, trainer int, step, epoch int64, lossSum float64, records int64) error {
	if trainer < 0 || trainer >= c.cfg.Trainers {
		return fmt.Errorf("trainer %d of %d: %w", trainer, c.cfg.Trainers, ErrBadTrainer)
	}
	c.mu.Lock()
	if c.fatal != nil {
		defer c.mu.Unlock()
		return c.fatal
	}
	if step < c.meta.Step || epoch != c.meta.Epoch || c.paused {
		c.mu.Unlock()
		return nil // a repeated report of a committed step, or one voided by a rollback
	}
	// A trainer may report step s+1 before its peers report s: the pservers
	// applied s when every push of s arrived, which precedes the reports.
	if step > c.meta.Step+1 || c.plan == nil || step >= c.plan.EndStep() {
		defer c.mu.Unlock()
		return fmt.Errorf("report of step %d, master at step %d: %w", step, c.meta.Step, ErrBadStep)
	}
	if c.reports[step] == nil {
		c.reports[step] = map[int]stepReport{}
	}
	c.reports[step][trainer] = stepReport{loss: lossSum, records: records}
	committed := false
	for len(c.reports[c.meta.Step]) == c.cfg.Trainers && c.plan.Contains(c.meta.Step) {
		c.commitStepLocked(c.meta.Step)
		committed = true
	}
	if !committed {
		c.mu.Unlock()
		return nil
	}
	gen := c.touchLocked()
	c.maybeEndPassLocked()
	c.mu.Unlock()
	return c.persist(ctx, gen)
}

func (c *Core) commitStepLocked(step int64) {
	for t := 0; t < c.cfg.Trainers; t++ {
		r := c.reports[step][t]
		c.meta.PassSamples += r.records
		c.meta.PassLossSum += r.loss
	}
	delete(c.reports, step)
	checkpoint := c.checkpointAfter[step]
	started, finished := c.plan.TasksTouched(step)
	group := c.cfg.Trainers // the whole trainer group holds sync tasks
	now := c.clock.Now()
	for _, id := range started {
		if st, _ := c.q.Status(id); st.State == Todo {
			t, err := c.q.Dispatch(group, now)
			if err != nil || t.ID != id {
				c.log.Error("sync plan and queue disagree", "want", id, "got", t.ID, "err", err)
			}
		}
	}
	for _, id := range finished {
		if st, _ := c.q.Status(id); st.State == Pending {
			if err := c.q.Finish(id, group); err != nil {
				c.log.Error("finish task", "task", id, "err", err)
			}
		}
	}
	c.meta.Step = step + 1
	c.lastCommit = c.clock.Now()
	if checkpoint {
		st := c.stateLocked()
		select {
		case c.snapshots <- st:
		default:
			c.log.Warn("master checkpoint skipped: the previous one is still being written", "step", c.meta.Step)
		}
	}
}

// stateLocked copies the whole state (meta and every task status).
func (c *Core) stateLocked() State {
	m := c.meta
	m.SamplesApplied = append([]int64(nil), c.meta.SamplesApplied...)
	return State{Meta: m, Statuses: c.q.Statuses()}
}

// GetTask (async) reports the previous task and asks for the next one.
func (c *Core) GetTask(ctx context.Context, trainer, finished, failed int, lossSum float64, records int64) (Work, error) {
	if trainer < 0 || trainer >= c.cfg.Trainers {
		return Work{}, fmt.Errorf("trainer %d of %d: %w", trainer, c.cfg.Trainers, ErrBadTrainer)
	}
	c.mu.Lock()
	gen := uint64(0)
	if finished >= 0 {
		if err := c.q.Finish(finished, trainer); err != nil {
			c.log.Warn("late finish: the task was taken back; its gradients were applied all the same", "task", finished, "trainer", trainer, "err", err)
		}
		// Async pushes are applied as they come: these records' gradients are in
		// the model whether or not the finish was on time (at-least-once).
		c.meta.PassSamples += records
		c.meta.PassLossSum += lossSum
		c.meta.Step += (records + int64(c.cfg.Batch) - 1) / int64(c.cfg.Batch)
		gen = c.touchLocked()
	}
	if failed >= 0 {
		if err := c.q.Fail(failed, trainer); err != nil {
			c.log.Warn("fail of a task not held", "task", failed, "trainer", trainer, "err", err)
		}
		gen = c.touchLocked()
	}
	c.mu.Unlock()
	// The report and the next dispatch are saved in one commit: one etcd
	// transaction per task for a lone trainer.
	deadline := time.Now().Add(c.cfg.LongPoll)
	for {
		c.mu.Lock()
		if c.fatal != nil {
			defer c.mu.Unlock()
			return Work{}, c.fatal
		}
		if c.meta.Done {
			c.mu.Unlock()
			return Work{Status: api.WorkStatus_WORK_DONE, Pass: c.cfg.Passes}, c.persist(ctx, gen)
		}
		if !c.ending {
			t, err := c.q.Dispatch(trainer, c.clock.Now())
			if err == nil {
				pass := c.meta.Pass
				gen = c.touchLocked()
				c.mu.Unlock()
				if err := c.persist(ctx, gen); err != nil {
					return Work{}, err
				}
				return Work{Status: api.WorkStatus_WORK_READY, Pass: pass, Task: t}, nil
			}
			c.maybeEndPassLocked()
		}
		ch := c.changed
		c.mu.Unlock()
		if gen > 0 {
			// Nothing to hand out yet: make the report durable before waiting.
			if err := c.persist(ctx, gen); err != nil {
				return Work{}, err
			}
			gen = 0
		}
		if !c.wait(ctx, ch, deadline) {
			return Work{Status: api.WorkStatus_WORK_WAIT}, ctx.Err()
		}
	}
}

// Stalled reports (sync) a step that has waited longer than after for its
// trainers: which step and which trainer IDs have not reported it.
func (c *Core) Stalled(after time.Duration) (step int64, missing []int, stalled bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.clock.Now()
	if !c.cfg.Sync || c.meta.Done || c.paused || c.ending {
		c.lastCommit = now // waiting for something else is not a stall
		return 0, nil, false
	}
	if c.lastCommit.IsZero() {
		c.lastCommit = now
	}
	if now.Sub(c.lastCommit) < after {
		return 0, nil, false
	}
	for t := 0; t < c.cfg.Trainers; t++ {
		if _, ok := c.reports[c.meta.Step][t]; !ok {
			missing = append(missing, t)
		}
	}
	return c.meta.Step, missing, true
}

// FlushProgress writes the progress record if a save skipped it, so the
// public view catches up even when training pauses.
func (c *Core) FlushProgress(ctx context.Context) error {
	c.mu.Lock()
	if !c.progressStale || c.fatal != nil {
		c.mu.Unlock()
		return nil
	}
	c.progressAt = time.Time{}
	gen := c.touchLocked()
	c.mu.Unlock()
	return c.persist(ctx, gen)
}

// Tick takes back (async) tasks whose trainer went silent past the timeout.
func (c *Core) Tick(ctx context.Context) error {
	c.mu.Lock()
	if c.cfg.Sync || c.meta.Done {
		c.mu.Unlock()
		return nil
	}
	expired := c.q.Expire(c.clock.Now())
	if len(expired) == 0 {
		c.mu.Unlock()
		return nil
	}
	c.log.Warn("tasks timed out; re-queued", "tasks", expired)
	gen := c.touchLocked()
	c.maybeEndPassLocked()
	c.mu.Unlock()
	return c.persist(ctx, gen)
}

// TrainerLost gives a vanished trainer's tasks (async) back at once, without
// waiting for their timeout.
func (c *Core) TrainerLost(ctx context.Context, trainer int) error {
	c.mu.Lock()
	if c.cfg.Sync {
		c.mu.Unlock()
		return nil
	}
	back := c.q.ReleaseTrainer(trainer)
	if len(back) == 0 {
		c.mu.Unlock()
		return nil
	}
	c.log.Warn("trainer lost; its tasks re-queued", "trainer", trainer, "tasks", back)
	gen := c.touchLocked()
	c.mu.Unlock()
	return c.persist(ctx, gen)
}

// maybeEndPassLocked starts the end of the pass once all of it is applied.
func (c *Core) maybeEndPassLocked() {
	if c.ending || c.meta.Done {
		return
	}
	var over bool
	if c.cfg.Sync {
		over = c.meta.Step >= c.plan.EndStep()
	} else {
		over = c.q.PassDone()
	}
	if !over {
		return
	}
	c.ending = true
	ctx, cancel := context.WithCancel(c.endCtx)
	c.endCancel = cancel
	go c.endPass(ctx, c.meta.Pass, c.meta.Step, c.meta.Epoch)
}

// endPass evaluates, then advances to the next pass (or finishes). Training
// of the next pass waits for it, so the evaluated parameters are exactly the
// pass's.
func (c *Core) endPass(ctx context.Context, pass int, step, epoch int64) {
	var metrics api.Metrics
	for attempt := 1; ; attempt++ {
		m, err := c.eval.EndPass(ctx, pass, step)
		if err == nil {
			metrics = m
			break
		}
		if ctx.Err() != nil {
			return
		}
		c.log.Warn("end of pass evaluation failed; retrying", "pass", pass, "attempt", attempt, "err", err)
		select {
		case <-time.After(time.Second):
		case <-ctx.Done():
			return
		}
	}
	c.mu.Lock()
	if c.meta.Epoch != epoch || c.meta.Pass != pass {
		c.mu.Unlock() // a rollback happened meanwhile; its own pass end will come
		return
	}
	m := c.meta
	if m.PassSamples > 0 {
		tl := m.PassLossSum / float64(m.PassSamples)
		metrics.TrainLoss = &tl
	}
	c.meta.Metrics = metrics
	c.meta.SamplesApplied = append(c.meta.SamplesApplied, m.PassSamples)
	c.meta.PassSamples, c.meta.PassLossSum = 0, 0
	c.meta.Pass++
	c.log.Info("pass finished", "pass", pass, "step", step, "samples", m.PassSamples,
		"train_loss", ptrVal(metrics.TrainLoss), "test_loss", ptrVal(metrics.TestLoss))
	if c.meta.Pass >= c.cfg.Passes {
		c.meta.Done = true
	} else {
		if err := c.q.NextPass(); err != nil {
			c.log.Error("next pass", "err", err)
		}
		c.meta.PassStartStep = c.meta.Step
		if c.cfg.Sync {
			c.plan = c.passPlanLocked()
		}
	}
	c.ending = false
	gen := c.touchLocked()
	c.mu.Unlock()
	if err := c.persist(ctx, gen); err != nil {
		c.log.Error("save after pass", "err", err)
	}
}

func ptrVal(p *float64) any {
	if p == nil {
		return nil
	}
	return *p
}

// Pause stops handing out steps and accepting reports while a rollback is
// prepared.
func (c *Core) Pause() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.paused = true
	c.touchLocked()
}

// Rollback puts the master back at a complete global checkpoint: state is the
// master's state saved at that step, nil for the very start. The epoch grows,
// so reports and plans of the abandoned steps are void.
func (c *Core) Rollback(ctx context.Context, state *State, epoch int64) error {
	c.mu.Lock()
	var q *Queue
	var meta Meta
	var err error
	if state == nil {
		q, err = NewQueue(c.cfg.Queue, c.tasks.Tasks)
		meta = Meta{Tasks: len(c.tasks.Tasks)}
	} else {
		q, err = RestoreQueue(c.cfg.Queue, c.tasks.Tasks, state.Meta.Pass, state.Statuses)
		meta = state.Meta
	}
	if err != nil {
		c.mu.Unlock()
		return fmt.Errorf("master: rollback: %w", err)
	}
	meta.Epoch = max(epoch, c.meta.Epoch+1)
	c.q, c.meta = q, meta
	c.plan = c.passPlanLocked()
	clear(c.reports)
	clear(c.checkpointAfter)
	if c.endCancel != nil {
		c.endCancel() // an evaluation of the abandoned history must not write a model
	}
	c.ending, c.paused, c.saveAll = false, false, true
	gen := c.touchLocked()
	c.log.Warn("rolled back", "pass", meta.Pass, "step", meta.Step, "epoch", meta.Epoch)
	c.maybeEndPassLocked()
	c.mu.Unlock()
	return c.persist(ctx, gen)
}
