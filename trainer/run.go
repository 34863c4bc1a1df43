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
	"go.etcd.io/etcd/client/v3/concurrency"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
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
	ps     *pserver.Client
	master api.MasterClient
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

	session, err := concurrency.NewSession(cli, concurrency.WithTTL(cfg.SessionTTL), concurrency.WithContext(ctx))
	if err != nil {
		return fmt.Errorf("trainer: etcd session: %w", err)
	}
	defer session.Close()

	addrs, err := pserver.Discover(ctx, cli, cfg.Job, t.spec.Pservers, t.log)
	if err != nil {
		return fmt.Errorf("trainer: %w", err)
	}
	if t.ps, err = pserver.NewClient(addrs, t.layout.Blocks); err != nil {
		return fmt.Errorf("trainer: %w", err)
	}
	defer t.ps.Close()

	conn, err := t.dialMaster(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	t.master = api.NewMasterClient(conn)
	var reg *api.RegisterTrainerResponse
	err = t.retry(ctx, "register with the master", func() error {
		var err error
		reg, err = t.master.RegisterTrainer(ctx, &api.RegisterTrainerRequest{Worker: cfg.Worker, LeaseId: int64(session.Lease())})
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

func (t *trainer) dialMaster(ctx context.Context) (*grpc.ClientConn, error) {
	var addr string
	err := t.retry(ctx, "find the master", func() error {
		var err error
		addr, err = coord.LeaderValue(ctx, t.cli, coord.ElectionPrefix(t.cfg.Job))
		if errors.Is(err, coord.ErrNoLeader) {
			return status.Error(codes.Unavailable, err.Error())
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return nil, fmt.Errorf("trainer: master at %s: %w", addr, err)
	}
	return conn, nil
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

func transient(err error) bool {
	switch status.Code(err) {
	case codes.Unavailable, codes.DeadlineExceeded, codes.Aborted:
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

func (t *trainer) runSync(ctx context.Context, step int64) error {
	var reported int64 = -1
	for {
		var w *api.GetStepResponse
		err := t.retry(ctx, "get a step", func() error {
			var err error
			w, err = t.master.GetStep(ctx, &api.GetStepRequest{TrainerId: int32(t.id), Step: step})
			return err
		})
		if err != nil {
			return err
		}
		switch w.Status {
		case api.WorkStatus_WORK_DONE:
			t.log.Info("training done", "last_step", reported)
			return nil
		case api.WorkStatus_WORK_WAIT:
			continue
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
		if err := t.retry(ctx, "pull parameters", func() error {
			_, err := t.ps.Pull(ctx, step, t.params)
			return err
		}); err != nil {
			return err
		}
		loss, err := t.compute(ex)
		if err != nil {
			return err
		}
		if err := t.retry(ctx, "push gradients", func() error {
			return t.ps.Push(ctx, t.id, step, int64(len(ex)), t.grads)
		}); err != nil {
			return err
		}
		if err := t.retry(ctx, "report the step", func() error {
			_, err := t.master.StepDone(ctx, &api.StepDoneRequest{TrainerId: int32(t.id), Step: step, LossSum: loss, Records: int64(len(ex))})
			return err
		}); err != nil {
			return err
		}
		reported = step
		if step%50 == 0 {
			t.log.Info("step done", "step", step, "pass", w.Pass, "records", len(ex), "loss", safeMean(loss, len(ex)))
		}
		step++
	}
}

func (t *trainer) runAsync(ctx context.Context) error {
	finished, failed := int32(-1), int32(-1)
	var lossSum float64
	var records int64
	for {
		var w *api.GetTaskResponse
		err := t.retry(ctx, "get a task", func() error {
			var err error
			w, err = t.master.GetTask(ctx, &api.GetTaskRequest{TrainerId: int32(t.id), FinishedTask: finished, FailedTask: failed, LossSum: lossSum, Records: records})
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
				_, err := t.ps.Pull(ctx, 0, t.params)
				return err
			}); err != nil {
				return err
			}
			loss, err := t.compute(batch)
			if err != nil {
				return err
			}
			if err := t.retry(ctx, "push gradients", func() error {
				return t.ps.Push(ctx, t.id, 0, int64(len(batch)), t.grads)
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
