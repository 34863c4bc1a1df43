package trainer

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/gtrain/gtrain/api"
	"github.com/gtrain/gtrain/coord"
	"github.com/gtrain/gtrain/dataset"
	"github.com/gtrain/gtrain/jobspec"
	"github.com/gtrain/gtrain/pserver"
	"github.com/gtrain/gtrain/recordio"
	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// ErrJobEnded is returned when the job ended while the trainer waited.
var ErrJobEnded = errors.New("job ended")

// Config configures the `gtraind trainer` process.
type Config struct {
	Job        string
	Worker     string // e.g. trainer-1
	Node       string
	SessionTTL int           // seconds
	Deadline   time.Duration // how long to keep retrying an unreachable master or pserver
	Log        *slog.Logger
}

// DefaultConfig returns the defaults.
func DefaultConfig() Config { return Config{SessionTTL: 5, Deadline: 5 * time.Minute} }

// Validate names the bad field.
func (c Config) Validate() error {
	switch {
	case c.Job == "":
		return errors.New("trainer: Job must be set")
	case c.Worker == "":
		return errors.New("trainer: Worker must be set")
	case c.SessionTTL < 1:
		return fmt.Errorf("trainer: SessionTTL must be >= 1, got %d", c.SessionTTL)
	case c.Deadline <= 0:
		return fmt.Errorf("trainer: Deadline must be > 0, got %s", c.Deadline)
	}
	return nil
}

type trainer struct {
	cfg    Config
	cli    *clientv3.Client
	spec   *jobspec.Spec
	layout *pserver.Layout
	ps     *pserver.Dynamic
	master *masterConn
	id     int
	params [][]float32
	grads  [][]float32
	data   *chunkCache
	log    *slog.Logger
}

// Run trains until the master says the job is done.
func Run(ctx context.Context, cli *clientv3.Client, cfg Config) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	t := &trainer{cfg: cfg, cli: cli, log: cfg.Log, data: newChunkCache(256)}
	if t.log == nil {
		t.log = slog.New(slog.DiscardHandler)
	}
	var rec coord.JobRecord
	if _, err := coord.GetJSON(ctx, cli, coord.JobKey(cfg.Job), &rec); err != nil {
		return fmt.Errorf("trainer: read job: %w", err)
	}
	t.spec = &rec.Spec
	var err error
	if t.layout, err = pserver.NewLayout(t.spec); err != nil {
		return err
	}
	t.params, t.grads = t.layout.NewParams(), t.layout.NewParams()

	session, err := coord.NewSession(ctx, cli, cfg.SessionTTL)
	if err != nil {
		return fmt.Errorf("trainer: etcd session: %w", err)
	}
	defer session.Close()

	if t.ps, err = pserver.NewDynamic(ctx, cli, cfg.Job, t.spec.Pservers, t.layout.Blocks, t.log); err != nil {
		return fmt.Errorf("trainer: %w", err)
	}
	defer t.ps.Close()

	t.master = &masterConn{t: t}
	defer t.master.close()
	var reg *api.RegisterTrainerResponse
	err = t.master.call(ctx, "register with the master", func(m api.MasterClient) error {
		var err error
		reg, err = m.RegisterTrainer(ctx, &api.RegisterTrainerRequest{Worker: cfg.Worker, LeaseId: int64(session.Lease())})
		return err
	})
	if err != nil {
		return t.endOr(ctx, err)
	}
	t.id = int(reg.TrainerId)
	t.log.Info("registered", "trainer_id", t.id, "trainers", reg.Trainers, "next_step", reg.NextStep)
	if t.spec.Mode == jobspec.ModeSync {
		err = t.runSync(ctx, reg.NextStep)
	} else {
		err = t.runAsync(ctx)
	}
	return t.endOr(ctx, err)
}

// endOr turns a failure into a clean exit when the job itself has ended. A
// damaged record chunk fails the job at once, naming file and offset: a
// restart would meet the same bytes, and training around them would silently
// drop records.
func (t *trainer) endOr(ctx context.Context, err error) error {
	if err == nil || errors.Is(err, ErrJobEnded) {
		return nil
	}
	if recordio.IsDamaged(err) {
		reason := fmt.Sprintf("%s: damaged training data: %v", t.cfg.Worker, err)
		if _, serr := coord.SetJobState(ctx, t.cli, t.cfg.Job, api.StateFailed, reason); serr != nil {
			t.log.Error("could not fail the job", "err", serr)
		}
		_ = coord.AppendEvent(ctx, t.cli, t.cfg.Job, reason)
		return err
	}
	if st, serr := coord.JobState(ctx, t.cli, t.cfg.Job); serr == nil && api.Terminal(st.State) {
		t.log.Info("job ended", "state", st.State)
		return nil
	}
	return err
}

// retry repeats fn while it fails with a transient error, with backoff,
// bounded by the job-level deadline; it gives up at once if the job ended.
func (t *trainer) retry(ctx context.Context, what string, fn func() error) error {
	deadline := time.Now().Add(t.cfg.Deadline)
	backoff := 100 * time.Millisecond
	for attempt := 1; ; attempt++ {
		err := fn()
		if err == nil {
			return nil
		}
		if !transient(err) || time.Now().After(deadline) {
			return fmt.Errorf("trainer: %s: %w", what, err)
		}
		if st, serr := coord.JobState(ctx, t.cli, t.cfg.Job); serr == nil && api.Terminal(st.State) {
			return ErrJobEnded
		}
		if attempt%10 == 1 {
			t.log.Warn("retrying", "what", what, "attempt", attempt, "err", err)
		}
		select {
		case <-time.After(backoff):
		case <-ctx.Done():
			return ctx.Err()
		}
		backoff = min(2*backoff, 2*time.Second)
	}
}

// psErr re-discovers the pservers after a transient failure: the one that
// failed may be restarting at a new address.
func (t *trainer) psErr(ctx context.Context, err error) error {
	if transient(err) {
		rctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		defer cancel()
		if rerr := t.ps.Refresh(rctx); rerr != nil {
			t.log.Debug("pservers not all back yet", "err", rerr)
		}
	}
	return err
}

// transient errors are retried in place; Aborted (a rollback) is not one: it
// sends a sync trainer back to the master (see resync).
func transient(err error) bool {
	switch status.Code(err) {
	case codes.Unavailable, codes.DeadlineExceeded:
		return true
	}
	return false
}

// compute zeroes the gradient buffers and accumulates the gradient sums of ex.
func (t *trainer) compute(ex []dataset.Example) (float64, error) {
	for _, g := range t.grads {
		clear(g)
	}
	if len(ex) == 0 {
		return 0, nil
	}
	b := dataset.ToBatch(ex)
	if err := t.layout.Model.Spec().CheckBatch(b); err != nil {
		return 0, fmt.Errorf("trainer: bad records: %w", err)
	}
	return t.layout.Model.Gradient(t.params, b, t.grads), nil
}

// runSync follows the master's step plan. After a rollback (a new epoch)
// it starts again where the master says; a push the pservers already applied
// (this trainer died after pushing it) is not pushed twice.
func (t *trainer) runSync(ctx context.Context, step int64) error {
	var epoch int64
	for {
		var w *api.GetStepResponse
		err := t.master.call(ctx, "get a step", func(m api.MasterClient) error {
			var err error
			w, err = m.GetStep(ctx, &api.GetStepRequest{TrainerId: int32(t.id), Step: step, Epoch: epoch})
			return err
		})
		if err != nil {
			return err
		}
		switch w.Status {
		case api.WorkStatus_WORK_DONE:
			t.log.Info("training done", "step", step)
			return nil
		case api.WorkStatus_WORK_WAIT:
			continue
		}
		if w.Epoch != epoch {
			if epoch != 0 {
				t.log.Warn("the job rolled back; resuming where the master says", "epoch", w.Epoch, "step", w.Step)
			}
			epoch = w.Epoch
			t.master.forget()
		}
		step = w.Step
		var ex []dataset.Example
		for _, sl := range w.Slices {
			part, err := t.data.slice(sl.File, int(sl.Chunk), int(sl.First), int(sl.Count))
			if err != nil {
				return fmt.Errorf("trainer: step %d: %w", step, err)
			}
			ex = append(ex, part...)
		}
		var lowest, highest int64
		err = t.retry(ctx, "pull parameters", func() error {
			var err error
			lowest, highest, err = t.ps.Client().Pull(ctx, step, epoch, t.params)
			return t.psErr(ctx, err)
		})
		if resync(err) {
			pause(ctx) // rolled back while we waited: ask the master again
			continue
		}
		if err != nil {
			return err
		}
		if lowest != highest {
			// Some pservers applied this step, others did not: a trainer died
			// mid-push. The step's parameters are gone on the first ones, so
			// no correct gradient exists: the job must roll back.
			reason := fmt.Sprintf("%s found pservers at steps %d and %d for step %d", t.cfg.Worker, lowest, highest, step)
			t.log.Warn("pservers disagree; asking the master to roll back", "reason", reason)
			if err := t.master.call(ctx, "request a rollback", func(m api.MasterClient) error {
				_, err := m.RequestRollback(ctx, &api.RequestRollbackRequest{TrainerId: int32(t.id), Epoch: epoch, Reason: reason})
				return err
			}); err != nil {
				return err
			}
			pause(ctx)
			continue
		}
		loss, err := t.compute(ex)
		if err != nil {
			return err
		}
		if highest == step {
			err = t.retry(ctx, "push gradients", func() error {
				return t.psErr(ctx, t.ps.Client().Push(ctx, t.id, step, epoch, int64(len(ex)), w.Checkpoint, t.grads))
			})
			switch {
			case err == nil:
			case resync(err):
				pause(ctx)
				continue
			default:
				return err
			}
		}
		// highest > step: the pservers applied this step already (our push
		// landed before a crash); the loss is then measured one step late.
		report := &api.StepDoneRequest{TrainerId: int32(t.id), Step: step, LossSum: loss, Records: int64(len(ex)), Epoch: epoch}
		t.master.remember(report)
		if err := t.master.call(ctx, "report the step", func(m api.MasterClient) error {
			_, err := m.StepDone(ctx, report)
			return err
		}); err != nil {
			if status.Code(err) == codes.InvalidArgument {
				t.log.Warn("step report refused; resyncing with the master", "step", step, "err", err)
				pause(ctx)
				continue
			}
			return err
		}
		if step%50 == 0 {
			t.log.Info("step done", "step", step, "pass", w.Pass, "records", len(ex), "loss", safeMean(loss, len(ex)))
		}
		step++
	}
}

// resync reports errors after which a sync trainer asks the master again:
// a rollback aborted its pull, or its push is for a step the pservers are
// not at.
func resync(err error) bool {
	switch status.Code(err) {
	case codes.Aborted, codes.FailedPrecondition:
		return true
	}
	return false
}

// pause keeps a trainer that must resync from spinning while a rollback is
// under way.
func pause(ctx context.Context) {
	select {
	case <-time.After(50 * time.Millisecond):
	case <-ctx.Done():
	}
}

func (t *trainer) runAsync(ctx context.Context) error {
	finished, failed := int32(-1), int32(-1)
	var lossSum float64
	var records int64
	for {
		var w *api.GetTaskResponse
		err := t.master.call(ctx, "get a task", func(m api.MasterClient) error {
			var err error
			w, err = m.GetTask(ctx, &api.GetTaskRequest{TrainerId: int32(t.id), FinishedTask: finished, FailedTask: failed, LossSum: lossSum, Records: records})
			return err
		})
		if err != nil {
			return err
		}
		finished, failed, lossSum, records = -1, -1, 0, 0
		switch w.Status {
		case api.WorkStatus_WORK_DONE:
			t.log.Info("training done")
			return nil
		case api.WorkStatus_WORK_WAIT:
			continue
		}
		task := w.Task
		var ex []dataset.Example
		for c := task.FirstChunk; c < task.FirstChunk+task.Chunks; c++ {
			part, err := t.data.get(task.File, int(c))
			if err != nil {
				return fmt.Errorf("trainer: task %d: %w", task.Id, err)
			}
			ex = append(ex, part...)
		}
		for lo := 0; lo < len(ex); lo += t.spec.BatchSize {
			batch := ex[lo:min(lo+t.spec.BatchSize, len(ex))]
			if err := t.retry(ctx, "pull parameters", func() error {
				_, _, err := t.ps.Client().Pull(ctx, 0, 0, t.params)
				return t.psErr(ctx, err)
			}); err != nil {
				return err
			}
			loss, err := t.compute(batch)
			if err != nil {
				return err
			}
			if err := t.retry(ctx, "push gradients", func() error {
				return t.psErr(ctx, t.ps.Client().Push(ctx, t.id, 0, 0, int64(len(batch)), false, t.grads))
			}); err != nil {
				return err
			}
			lossSum += loss
			records += int64(len(batch))
		}
		finished = task.Id
	}
}

func safeMean(sum float64, n int) float64 {
	if n == 0 {
		return 0
	}
	return sum / float64(n)
}
