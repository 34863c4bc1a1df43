package core

import (
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"time"

	"github.com/gtrain/gtrain/api"
	"github.com/gtrain/gtrain/coord/schema"
)

// ProgressEvery bounds how often the public progress record is rewritten: it
// is read by people and status polls, not needed for recovery.
const ProgressEvery = 250 * time.Millisecond

// Sentinel errors of the core.
var (
	ErrStaleState = errors.New("stored master state does not match the training data")
	ErrBadTrainer = errors.New("trainer ID out of range")
	ErrBadStep    = errors.New("step out of order")
	// ErrJobDone: a finished job is not rolled back (its SUCCEEDED state
	// and samples_applied would no longer agree).
	ErrJobDone = errors.New("the job finished")
)

// CoreConfig configures the core.
type CoreConfig struct {
	Sync     bool
	Trainers int // trainer IDs are 0..Trainers-1
	// MicroBatches (sync) is the micro-batches of Batch records a step is cut
	// into: the global batch over the micro-batch size.
	MicroBatches int
	Batch        int
	// StragglerFactor and StragglerFloor set the straggler deadline
	// (core_straggler.go); 0: the defaults.
	StragglerFactor int
	StragglerFloor  time.Duration
	Passes          int
	Queue           QueueConfig
	ModelDir        string
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
	case c.Sync && c.MicroBatches < 1:
		return fmt.Errorf("master: MicroBatches must be >= 1 in sync mode, got %d", c.MicroBatches)
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
	MicroBatch int     // sync: which micro-batch of Step the slices are
	Checkpoint bool    // sync: the pservers checkpoint after applying Step
	Epoch      int64   // sync
	// PullWithPush (sync): the step's other micro-batches are covered
	// (othersCover), so the trainer's push may wait for the step to be
	// applied and bring back the next step's parameters.
	PullWithPush bool
	// NextSlices (sync) are the slices of the same micro-batch of the next
	// step, when the pass holds it: a hint the trainer reads ahead with.
	NextSlices []Slice
	Task       Task // async
}

// State is the master's whole state at a step: what a sync checkpoint keeps
// so that a rollback can put the master back at that step.
type State struct {
	Meta     Meta         `json:"meta"`
	Statuses []TaskStatus `json:"statuses"`
}

// PassEnd is a pass whose every step is applied: it is evaluated at Step,
// and its result counts only while the job is still in Epoch.
type PassEnd struct {
	Pass  int
	Step  int64
	Epoch int64
}

// Effects is what a change of the core asks of its driver.
type Effects struct {
	// Changed: waiters are woken, and the change is saved before it is
	// acknowledged, unless Deferred.
	Changed bool
	// Deferred (sync step commits): the change is saved in the background,
	// not before it is acknowledged. A new master recomputes it: the step
	// plan is a pure function of the pass, and the pservers know the steps
	// they applied (CatchUp).
	Deferred bool
	// Snapshots are the master's states at checkpointed steps, to write.
	Snapshots []State
	// PassEnd is a pass to evaluate (then report with PassEnded).
	PassEnd *PassEnd
	// CancelPassEnd: the evaluation under way belongs to an abandoned history.
	CancelPassEnd bool
	// Fail: the job must end FAILED with this reason (it diverged:
	// core_diverge.go); the core hands out no more work.
	Fail string
}

// Save is one commit of the state: the meta, the task statuses changed since
// the previous one and, when due, the public progress record.
type Save struct {
	Meta     Meta
	Changed  []TaskStatus
	Progress *schema.ProgressRecord // nil: not due
}

type stepReport struct {
	loss    float64
	records int64
	// lossUnknown: the step was committed from the plan (CatchUp); the
	// report and its loss went with a master that died.
	lossUnknown bool
}

// Core is the master's state machine: the queue, the sync plan, accounting,
// checkpoint and pass-end decisions. It holds no lock, starts nothing and
// reads no clock: the caller passes the time and carries out the Effects
// (the Driver does, for concurrent trainers).
type Core struct {
	cfg   CoreConfig
	tasks *TaskSet
	log   *slog.Logger

	q        *Queue
	meta     Meta
	plan     *PassPlan                    // sync: the current pass
	reports  map[int64]map[int]stepReport // sync: reports by step, then micro-batch
	assigned map[int64]map[int]int        // sync: trainer holding each micro-batch, by step (core_microbatch.go)
	timing   timing                       // sync: micro-batch times, for stragglers (core_straggler.go)
	ending   bool                         // a pass end is being evaluated
	paused   bool                         // sync: a rollback is under way; hand out nothing
	saveAll  bool                         // the next save writes every task (after a rollback)
	live     map[int]bool                 // async: trainers whose etcd lease is alive (see TrainerUp)
	failed   string                       // why the job must fail (it diverged); "" while it need not
	warning  string                       // what keeps the pass end under way from finishing (PassEndWarning)

	checkpointAfter map[int64]bool // sync: decided checkpoint flags by step
	lastCheckpoint  time.Time      // sync: when the last timed checkpoint was decided
	checkpointNext  bool           // sync: the next step decided is checkpointed (a re-shard: core_reshard.go)
	lastCommit      time.Time      // sync: when a step was last committed

	// progress (the public view) is saved at most every ProgressEvery, and
	// whenever the pass changes, training ends or a rollback happens.
	progressAt    time.Time
	progressPass  int
	progressStale bool // a save skipped the progress record
}

// NewCore restores the state stored (meta nil: nothing stored; pass 0 starts).
func NewCore(cfg CoreConfig, tasks *TaskSet, stored *Meta, statuses []TaskStatus, now time.Time, log *slog.Logger) (*Core, Effects, error) {
	if err := cfg.Validate(); err != nil {
		return nil, Effects{}, err
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	c := &Core{cfg: cfg, tasks: tasks, log: log, reports: map[int64]map[int]stepReport{}, assigned: map[int64]map[int]int{}, timing: newTiming(),
		checkpointAfter: map[int64]bool{}, lastCheckpoint: now, live: map[int]bool{}}
	var eff Effects
	var err error
	if stored == nil {
		if c.q, err = NewQueue(cfg.Queue, tasks.Tasks); err != nil {
			return nil, Effects{}, err
		}
		c.meta = Meta{Tasks: len(tasks.Tasks), PassStart: now}
		eff.Changed = true
	} else {
		if stored.Tasks != len(tasks.Tasks) {
			return nil, Effects{}, fmt.Errorf("master: %d tasks stored, %d cut from the data: %w", stored.Tasks, len(tasks.Tasks), ErrStaleState)
		}
		if c.q, err = RestoreQueue(cfg.Queue, tasks.Tasks, stored.Pass, statuses); err != nil {
			return nil, Effects{}, fmt.Errorf("master: restore: %w", err)
		}
		c.q.RebaseDeadlines(now) // stored deadlines are another clock's
		c.meta = *stored
		if c.meta.PassStart.IsZero() {
			c.meta.PassStart = now // stored by a master that kept no pass times
		}
		log.Info("master state restored", "pass", stored.Pass, "step", stored.Step, "counts", c.q.Counts())
	}
	if cfg.Sync && !c.meta.Done {
		c.plan = c.passPlan()
	}
	eff.PassEnd = c.maybeEndPass()
	return c, eff, nil
}

// passPlan lays out the current pass in queue order (failed tasks are left out).
func (c *Core) passPlan() *PassPlan {
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
	p := NewPassPlan(c.meta.Pass, c.meta.PassStartStep, c.cfg.MicroBatches, c.cfg.Batch, ordered, c.tasks.ChunkRecords)
	p.Order = NewRecordOrder(c.cfg.Queue.Seed, !c.cfg.Queue.NoShuffle, c.meta.Pass)
	return p
}

// CheckTrainer refuses a trainer ID out of range.
func (c *Core) CheckTrainer(trainer int) error {
	if trainer < 0 || trainer >= c.cfg.Trainers {
		return fmt.Errorf("trainer %d of %d: %w", trainer, c.cfg.Trainers, ErrBadTrainer)
	}
	return nil
}

// Done reports whether training finished.
func (c *Core) Done() bool { return c.meta.Done }

// Epoch is the current rollback epoch.
func (c *Core) Epoch() int64 { return c.meta.Epoch }

// Position returns the pass and the committed step.
func (c *Core) Position() (int, int64) { return c.meta.Pass, c.meta.Step }

// Meta returns a copy of the meta.
func (c *Core) Meta() Meta {
	m := c.meta
	m.SamplesApplied = append([]int64(nil), c.meta.SamplesApplied...)
	return m
}

// state copies the whole state (meta and every task status).
func (c *Core) state() State { return State{Meta: c.Meta(), Statuses: c.q.Statuses()} }

// Step (sync) answers a trainer asking for work in epoch: READY with a
// micro-batch to compute (of the committed step or the next, whatever step
// the trainer names: see handOut), DONE, or WAIT with the step and epoch to
// ask for again. A trainer of an older epoch (before a rollback) is sent to
// the step the job is at. A trainer may be handed a step the pservers
// applied already (a master that died with reports unsaved): it reports it
// without pushing again.
func (c *Core) Step(trainer int, step, epoch int64, now time.Time) Work {
	if c.meta.Done {
		return Work{Status: api.WorkStatus_WORK_DONE, Pass: c.cfg.Passes, Epoch: c.meta.Epoch}
	}
	if epoch != c.meta.Epoch {
		epoch = c.meta.Epoch
	}
	step = c.meta.Step
	c.timing.seen[trainer] = now
	delete(c.timing.started, trainer) // asking, it computes nothing
	if c.paused || c.failed != "" || !c.plan.Contains(step) {
		return Work{Status: api.WorkStatus_WORK_WAIT, Step: step, Epoch: epoch}
	}
	s, mb, ok := c.handOut(trainer, now)
	if !ok {
		// Every micro-batch within reach is held: the trainer waits for a
		// commit (or for a lost trainer's micro-batches).
		return Work{Status: api.WorkStatus_WORK_WAIT, Step: step, Epoch: epoch}
	}
	w := Work{Status: api.WorkStatus_WORK_READY, Pass: c.plan.Pass, Step: s, MicroBatch: mb, Slices: c.plan.Slices(s, mb),
		Checkpoint: c.decideCheckpoint(s, now), Epoch: c.meta.Epoch, PullWithPush: c.othersCover(trainer, s, mb)}
	if c.plan.Contains(s + 1) {
		w.NextSlices = c.plan.Slices(s+1, mb)
	}
	return w
}

// decideCheckpoint decides, once per step, whether the pservers checkpoint
// after applying it. Every trainer gets the same answer, so every pserver
// snapshots the same step.
func (c *Core) decideCheckpoint(step int64, now time.Time) bool {
	if v, ok := c.checkpointAfter[step]; ok {
		return v
	}
	v := step+1 == c.plan.EndStep() ||
		(c.cfg.CheckpointSteps > 0 && (step+1)%c.cfg.CheckpointSteps == 0) ||
		(c.cfg.CheckpointEvery > 0 && now.Sub(c.lastCheckpoint) >= c.cfg.CheckpointEvery) || c.checkpointNext
	if v {
		c.lastCheckpoint, c.checkpointNext = now, false
	}
	c.checkpointAfter[step] = v
	for s := range c.checkpointAfter {
		if s < c.meta.Step-2 {
			delete(c.checkpointAfter, s)
		}
	}
	return v
}

// StepDone (sync) records that the gradient of micro-batch mb of step,
// computed by trainer, reached every pserver; the first report of a
// micro-batch counts, a repeat changes nothing. When every micro-batch is
// reported, the step is committed: its records are accounted, finished tasks
// marked done, and the state is to be saved.
func (c *Core) StepDone(trainer, mb int, step, epoch int64, lossSum float64, records int64, now time.Time) (Effects, error) {
	if err := c.CheckTrainer(trainer); err != nil {
		return Effects{}, err
	}
	if err := c.checkMicroBatch(mb); err != nil {
		return Effects{}, err
	}
	c.timing.seen[trainer] = now
	if step < c.meta.Step || epoch != c.meta.Epoch || c.paused || c.failed != "" {
		return Effects{}, nil // a repeated report of a committed step, one voided by a rollback, or of a failed job
	}
	// A trainer may report step s+1 before its peers report s: the pservers
	// applied s when every push of s arrived, which precedes the reports.
	if step > c.meta.Step+1 || c.plan == nil || step >= c.plan.EndStep() {
		return Effects{}, fmt.Errorf("report of step %d, master at step %d: %w", step, c.meta.Step, ErrBadStep)
	}
	if c.reports[step] == nil {
		c.reports[step] = map[int]stepReport{}
	}
	if _, repeat := c.reports[step][mb]; !repeat {
		if eff, ok := c.checkLoss(step, lossSum); !ok {
			return eff, nil
		}
		c.reports[step][mb] = stepReport{loss: lossSum, records: records}
		c.timing.noteReport(trainer, now)
	}
	var eff Effects
	for len(c.reports[c.meta.Step]) == c.cfg.MicroBatches && c.plan.Contains(c.meta.Step) {
		if snap := c.commitStep(c.meta.Step, now); snap != nil {
			eff.Snapshots = append(eff.Snapshots, *snap)
		}
		eff.Changed = true
	}
	if eff.Changed {
		eff.PassEnd = c.maybeEndPass()
		// A pass end is saved before it is evaluated; any other commit is
		// recomputed by a new master from the plan and the pservers' step.
		eff.Deferred = eff.PassEnd == nil
	}
	return eff, nil
}

// commitStep accounts step and returns the state to checkpoint after it, if any.
func (c *Core) commitStep(step int64, now time.Time) *State {
	for mb := range c.cfg.MicroBatches {
		r := c.reports[step][mb]
		c.meta.PassSamples += r.records
		c.meta.PassLossSum += r.loss
		if r.lossUnknown {
			c.meta.PassLossSkipped += r.records
		}
	}
	delete(c.reports, step)
	delete(c.assigned, step)
	c.timing.committed(step, now)
	started, finished := c.plan.TasksTouched(step)
	group := c.cfg.Trainers // the whole trainer group holds sync tasks
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
	c.lastCommit = now
	if !c.checkpointAfter[step] {
		return nil
	}
	st := c.state()
	return &st
}

// Report (async) accounts a trainer's finished task and fails its failed
// one (-1: none).
//
// samples_applied counts the records of every finished task once: a finish
// on time counts; a late finish (the task was taken back from a trainer not
// known alive, and is todo or pending elsewhere) counts too, as its
// gradients are in the model and the re-run's will be as well
// (at-least-once); a finish of a task already done does not count: it is
// the repeat of a report whose answer was lost (a master that died after
// saving it), or a late finish after the re-run finished first.
func (c *Core) Report(trainer, finished, failed int, lossSum float64, records int64) Effects {
	return c.ReportPass(trainer, c.meta.Pass, finished, failed, lossSum, records)
}

// ReportPass is Report of tasks handed out in pass. A report of an earlier
// pass changes nothing: that pass ended, so every task of it was reported
// done, this one included; it is the repeat of a report whose answer was
// lost (the master died after saving it and the pass end).
func (c *Core) ReportPass(trainer, pass, finished, failed int, lossSum float64, records int64) Effects {
	var eff Effects
	if c.failed != "" {
		return eff
	}
	if pass != c.meta.Pass && (finished >= 0 || failed >= 0) {
		c.log.Warn("report of a task of another pass: a repeat; ignored", "trainer", trainer, "pass", pass,
			"current_pass", c.meta.Pass, "finished", finished, "failed", failed)
		return eff
	}
	if finished >= 0 {
		if eff, ok := c.checkLoss(c.meta.Step, lossSum); !ok {
			return eff
		}
		if st, ok := c.q.Status(finished); ok && st.State == Done {
			c.log.Warn("finish of a task already done: a repeated report; not counted again", "task", finished, "trainer", trainer)
		} else {
			if err := c.q.Finish(finished, trainer); err != nil {
				c.log.Warn("late finish: the task was taken back; its gradients were applied all the same", "task", finished, "trainer", trainer, "err", err)
			}
			// Async pushes are applied as they come: these records' gradients are in
			// the model whether or not the finish was on time (at-least-once).
			c.meta.PassSamples += records
			c.meta.PassLossSum += lossSum
			c.meta.Step += (records + int64(c.cfg.Batch) - 1) / int64(c.cfg.Batch)
			eff.Changed = true
		}
	}
	if failed >= 0 {
		if err := c.q.Fail(failed, trainer); err != nil {
			c.log.Warn("fail of a task not held", "task", failed, "trainer", trainer, "err", err)
		}
		eff.Changed = true
	}
	return eff
}

// Task (async) answers a trainer asking for a task: READY with a task
// dispatched to it, DONE, or WAIT (every task is held, or the pass ends).
func (c *Core) Task(trainer int, now time.Time) (Work, Effects) {
	if c.meta.Done {
		return Work{Status: api.WorkStatus_WORK_DONE, Pass: c.cfg.Passes}, Effects{}
	}
	var eff Effects
	// An async trainer asking for work holds nothing (its finished task is
	// reported first): a task still pending for it was dispatched in an
	// answer it never got (a master that died after saving the dispatch, a
	// request cut off) or by a dead incarnation of the same trainer ID. It
	// goes back to the front of todo, without a failure, so the trainer
	// usually gets it again at once.
	if back := c.q.ReleaseTrainer(trainer); len(back) > 0 {
		c.log.Warn("trainer asks for work while holding tasks it never got; re-queued", "trainer", trainer, "tasks", back)
		eff.Changed = true
	}
	if c.ending || c.failed != "" {
		return Work{Status: api.WorkStatus_WORK_WAIT}, eff
	}
	if t, err := c.q.Dispatch(trainer, now); err == nil {
		return Work{Status: api.WorkStatus_WORK_READY, Pass: c.meta.Pass, Task: t}, Effects{Changed: true}
	}
	eff.PassEnd = c.maybeEndPass()
	return Work{Status: api.WorkStatus_WORK_WAIT}, eff
}

// Stalled reports (sync) a step that has waited longer than after for its
// trainers: which step and which trainer IDs hold a micro-batch of it not
// reported; or trainers that have held a micro-batch longer than after while
// the steps went on without them (stragglers).
func (c *Core) Stalled(after time.Duration, now time.Time) (step int64, missing []int, stalled bool) {
	if !c.cfg.Sync || c.meta.Done || c.paused || c.ending {
		c.lastCommit = now // waiting for something else is not a stall
		return 0, nil, false
	}
	if c.lastCommit.IsZero() {
		c.lastCommit = now
	}
	if stuck := c.stuckTrainers(after, now); len(stuck) > 0 {
		// Steps go on without a straggler; it is hung all the same.
		return c.meta.Step, stuck, true
	}
	if now.Sub(c.lastCommit) < after {
		return 0, nil, false
	}
	return c.meta.Step, c.holdersOf(c.meta.Step), true
}

// FlushProgress makes the next save write the progress record if a save
// skipped it, so the public view catches up even when training pauses.
func (c *Core) FlushProgress() Effects {
	if !c.progressStale {
		return Effects{}
	}
	c.progressAt = time.Time{}
	return Effects{Changed: true}
}

// Tick takes back (async) tasks whose trainer is not known alive and went
// silent past the timeout; the tasks of live trainers are renewed first, so
// a slow live trainer never loses its task.
func (c *Core) Tick(now time.Time) Effects {
	if c.cfg.Sync || c.meta.Done {
		return Effects{}
	}
	for trainer := range c.live {
		c.q.RenewTrainer(trainer, now)
	}
	expired := c.q.Expire(now)
	if len(expired) == 0 {
		return Effects{}
	}
	c.log.Warn("tasks timed out; re-queued", "tasks", expired)
	return Effects{Changed: true, PassEnd: c.maybeEndPass()}
}

// TrainerLost gives a vanished trainer's tasks (async) or micro-batches
// (sync) back at once, without waiting for their timeout.
func (c *Core) TrainerLost(trainer int) Effects {
	delete(c.live, trainer)
	if c.cfg.Sync {
		if c.releaseTrainer(trainer) {
			c.log.Warn("trainer lost; its micro-batches handed to others", "trainer", trainer)
			return Effects{Changed: true}
		}
		return Effects{}
	}
	back := c.q.ReleaseTrainer(trainer)
	if len(back) == 0 {
		return Effects{}
	}
	c.log.Warn("trainer lost; its tasks re-queued", "trainer", trainer, "tasks", back)
	return Effects{Changed: true}
}

// maybeEndPass starts the end of the pass once all of it is applied.
func (c *Core) maybeEndPass() *PassEnd {
	if c.ending || c.meta.Done || c.failed != "" {
		return nil
	}
	var over bool
	if c.cfg.Sync {
		over = c.meta.Step >= c.plan.EndStep()
	} else {
		over = c.q.PassDone()
	}
	if !over {
		return nil
	}
	c.ending = true
	return &PassEnd{Pass: c.meta.Pass, Step: c.meta.Step, Epoch: c.meta.Epoch}
}

// PassEnded advances to the next pass (or finishes) with the metrics of the
// pass evaluated; training of the next pass waited for it, so the evaluated
// parameters are exactly the pass's. A pass end voided by a rollback meanwhile
// changes nothing (the rollback's own pass end will come).
func (c *Core) PassEnded(end PassEnd, metrics api.Metrics, now time.Time) Effects {
	if c.meta.Epoch != end.Epoch || c.meta.Pass != end.Pass {
		return Effects{}
	}
	m := c.meta
	if n := m.PassSamples - m.PassLossSkipped; n > 0 {
		tl := m.PassLossSum / float64(n) // the mean over the records whose loss was reported
		metrics.TrainLoss = &tl
	}
	if eff, ok := c.checkMetrics(end, metrics); !ok {
		return eff
	}
	c.warning = ""
	c.meta.Metrics = metrics
	c.meta.LastPass = passHistory(m, end, metrics, now)
	c.meta.PassStart = now
	c.meta.SamplesApplied = append(c.meta.SamplesApplied, m.PassSamples)
	c.meta.PassSamples, c.meta.PassLossSum, c.meta.PassLossSkipped = 0, 0, 0
	c.meta.Pass++
	c.log.Info("pass finished", "pass", end.Pass, "step", end.Step, "samples", m.PassSamples,
		"train_loss", ptrVal(metrics.TrainLoss), "test_loss", ptrVal(metrics.TestLoss))
	if c.meta.Pass >= c.cfg.Passes {
		c.meta.Done = true
	} else {
		if err := c.q.NextPass(); err != nil {
			c.log.Error("next pass", "err", err)
		}
		c.meta.PassStartStep = c.meta.Step
		if c.cfg.Sync {
			c.plan = c.passPlan()
		}
	}
	c.ending = false
	return Effects{Changed: true}
}

func ptrVal(p *float64) any {
	if p == nil {
		return nil
	}
	return *p
}

// Finishing reports whether the job finished, or evaluates its last pass:
// nothing is left to train, and a rollback now would undo a finished job.
// (While paused no report commits, so no pass end starts; one under way
// still ends.)
func (c *Core) Finishing() bool {
	return c.meta.Done || c.ending && c.meta.Pass == c.cfg.Passes-1
}

// Pause stops handing out steps and accepting reports while a rollback is
// prepared.
func (c *Core) Pause() Effects {
	c.paused = true
	return Effects{Changed: true}
}

// Rollback puts the master back at a complete global checkpoint: state is the
// master's state saved at that step, nil for the very start. The epoch grows
// (to epoch at least), so reports and plans of the abandoned steps are void.
func (c *Core) Rollback(state *State, epoch int64, now time.Time) (Effects, error) {
	if c.meta.Done {
		return Effects{}, fmt.Errorf("master: rollback: %w", ErrJobDone)
	}
	var q *Queue
	var meta Meta
	var err error
	if state == nil {
		q, err = NewQueue(c.cfg.Queue, c.tasks.Tasks)
		meta = Meta{Tasks: len(c.tasks.Tasks), PassStart: now}
	} else {
		q, err = RestoreQueue(c.cfg.Queue, c.tasks.Tasks, state.Meta.Pass, state.Statuses)
		if err == nil {
			q.RebaseDeadlines(now)
		}
		meta = state.Meta
	}
	if err != nil {
		return Effects{}, fmt.Errorf("master: rollback: %w", err)
	}
	meta.Epoch = max(epoch, c.meta.Epoch+1)
	// The slot in use stays the one in use, whatever it was at the checkpoint:
	// the full rewrite that follows must go to the other one.
	meta.Slot = c.meta.Slot
	c.q, c.meta = q, meta
	c.plan = c.passPlan()
	clear(c.reports)
	clear(c.assigned)
	c.timing.reset()
	// The step starts anew: what it waited before (for the silent pserver
	// whose replacement rolled the job back) is no trainer's stall.
	c.lastCommit = now
	clear(c.checkpointAfter)
	c.ending, c.paused, c.saveAll = false, false, true
	c.warning = "" // it was the abandoned pass end's
	c.log.Warn("rolled back", "pass", meta.Pass, "step", meta.Step, "epoch", meta.Epoch)
	// An evaluation of the abandoned history must not write a model.
	return Effects{Changed: true, CancelPassEnd: true, PassEnd: c.maybeEndPass()}, nil
}

// TakeSave returns what the next commit writes: the meta, the task statuses
// changed since the last TakeSave (every one after a rollback) and the
// progress record when due. A rewrite of every task goes to the other slot.
// now paces the progress record; wall is the time it shows.
func (c *Core) TakeSave(now, wall time.Time) Save {
	_, changed := c.q.TakeChanges()
	var progress *schema.ProgressRecord
	if c.saveAll || c.meta.Done || c.meta.Pass != c.progressPass || now.Sub(c.progressAt) >= ProgressEvery {
		p := c.progress(wall)
		progress, c.progressAt, c.progressPass = &p, now, c.meta.Pass
	}
	c.progressStale = progress == nil
	if c.saveAll {
		changed, c.saveAll = c.q.Statuses(), false
	}
	if len(changed) > 0 && len(changed) == len(c.tasks.Tasks) {
		c.meta.Slot = 1 - c.meta.Slot // a full rewrite: into the other copy
	}
	return Save{Meta: c.Meta(), Changed: changed, Progress: progress}
}

func (c *Core) progress(wall time.Time) schema.ProgressRecord {
	n := c.q.Counts()
	return schema.ProgressRecord{
		Pass: c.meta.Pass, Passes: c.cfg.Passes, Step: c.meta.Step,
		Tasks:          api.TaskCounts{Todo: n.Todo, Pending: n.Pending, Done: n.Done, Failed: n.Failed},
		SamplesApplied: append([]int64{}, c.meta.SamplesApplied...),
		Metrics:        c.meta.Metrics, ModelDir: c.cfg.ModelDir, Epoch: c.meta.Epoch, Updated: wall.UTC(),
		StepMs: c.stepMs(), Warnings: c.warnings(),
	}
}
