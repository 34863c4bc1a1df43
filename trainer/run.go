package trainer

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gtrain/gtrain/api"
	"github.com/gtrain/gtrain/coord"
	"github.com/gtrain/gtrain/dataset"
	"github.com/gtrain/gtrain/internal/clock"
	"github.com/gtrain/gtrain/internal/confine"
	"github.com/gtrain/gtrain/internal/jobauth"
	"github.com/gtrain/gtrain/internal/rolecfg"
	"github.com/gtrain/gtrain/internal/roleruntime"
	"github.com/gtrain/gtrain/jobspec"
	"github.com/gtrain/gtrain/metrics"
	"github.com/gtrain/gtrain/model"
	"github.com/gtrain/gtrain/program"
	"github.com/gtrain/gtrain/pserver/client"
	"github.com/gtrain/gtrain/recordio"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/concurrency"
)

// ErrJobEnded is returned when the job ended while the trainer waited.
var ErrJobEnded = errors.New("job ended")

// Config configures the `gtraind trainer` process.
type Config struct {
	// Common is the job, node, job revision (a trainer of a purged and
	// resubmitted job stops), session TTL, log and metrics; its TLS is the
	// node certificate the trainer dials the master and the pservers with.
	rolecfg.Common
	Worker string // e.g. trainer-1
	// DataDir is the agent's data dir, one of the roots the trainer opens
	// its shards beneath (rolecfg.Common.Roots).
	DataDir  string
	Deadline time.Duration // how long to keep retrying an unreachable master or pserver
	// Clock is what the trainer waits and times by (nil: clock.System).
	Clock clock.Clock
	// OwnsRuntime says the trainer is its process's only tenant (`gtraind
	// trainer`): GOMAXPROCS follows resources.trainer.cpu. Leave it false
	// where it shares a process, as in tests.
	OwnsRuntime bool
	// ComputeCPUs are CPUs the agent keeps for this trainer's computation
	// (pin.go); none: it computes where Linux schedules it.
	ComputeCPUs []int
}

// DefaultConfig returns the defaults.
func DefaultConfig() Config {
	return Config{Common: rolecfg.Common{SessionTTL: rolecfg.DefaultSessionTTL}, Deadline: 5 * time.Minute}
}

// Validate names the bad field.
func (c Config) Validate() error {
	if err := c.Common.Validate("trainer"); err != nil {
		return err
	}
	switch {
	case c.Worker == "":
		return errors.New("trainer: Worker must be set")
	case c.Deadline <= 0:
		return fmt.Errorf("trainer: Deadline must be > 0, got %s", c.Deadline)
	}
	return nil
}

type trainer struct {
	stop    context.Context // sync: done when told to stop (leave.go); nil: never
	cfg     Config
	cli     *clientv3.Client
	spec    *jobspec.Spec
	roots   confine.Roots // where the job's paths are opened (rolecfg.Common.Roots)
	jobRev  int64         // the create revision of the job's record: with its name, its programs' uid
	layout  *client.Layout
	ps      pservers
	metrics *metrics.Trainer // nil: records nothing
	// pinLogged logs once whether the compute CPUs were had (pin.go).
	pinLogged sync.Once
	pinnedOK  atomic.Bool    // a computation ran on the compute CPUs (overlap.go: no yield)
	computer  *computeThread // where a built-in model computes with compute CPUs (pin.go), else nil
	master    *masterConn
	id        int
	params    [][]float32
	grads     [][]float32
	data      *chunkCache
	batch     model.Batch // the last micro-batch's records, its memory reused
	carry     syncCarry   // sync: what a micro-batch's push and report leave the next
	log       *slog.Logger
	clock     clock.Clock
	creds     jobauth.Dial     // dials the master and the pservers: TLS, the job credential
	lease     clientv3.LeaseID // the registration's lease (0: none)
	prog      *program.Client  // the model program (model.kind program), else nil
	rec       *recState        // the recommender's micro-batch (model.kind recommender), else nil
	progStep  program.Step     // what the program learns of the micro-batch it computes
	early     *earlyStep       // sync: the next micro-batch, computing before the master named it (early.go)
	// earlyTaken and earlyDropped count the early micro-batches pushed
	// and dropped (logged when training is done).
	earlyTaken, earlyDropped int
	earlyAhead               int          // of them, started before their parameters were back (ahead.go)
	computedAt               atomic.Int64 // when the last computation ended (UnixNano), for the next one's time
	// ahead is the micro-batch computing ahead of its parameters while
	// the push that brings them runs (ahead.go), or nil.
	ahead *ahead
}

// syncCarry is what a sync micro-batch's push and report hand the next one
// (pushreport.go); runSync's decideSync reads it.
type syncCarry struct {
	next *api.GetStepResponse // the next work, answered with the last step report
	// prefetched is the step and epoch whose parameters the last push
	// brought back into params (PushPull); nil: none.
	prefetched *stepOfEpoch
	readAhead  *readAhead // the next work's records, read while the last push waited
	hint       *hintRead  // the records of the master's hint of the next work (hint.go)
}

// Run trains until the master says the job is done.
func Run(ctx context.Context, cli *clientv3.Client, cfg Config) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	t, err := newTrainer(ctx, cli, cfg)
	if err != nil {
		return err
	}
	defer t.data.close()
	defer t.closeProgram()
	if err := t.startProgram(ctx); err != nil {
		return t.endOr(ctx, err)
	}
	defer t.startComputeThread()()
	session, err := coord.NewSession(ctx, cli, cfg.SessionTTL)
	if err != nil {
		return fmt.Errorf("trainer: etcd session: %w", err)
	}
	defer session.Close()
	ps, err := client.NewDynamic(ctx, cli, cfg.Job, t.spec.Pservers, t.layout.Blocks, t.creds, t.log)
	if err != nil {
		return fmt.Errorf("trainer: %w", err)
	}
	defer ps.Close()
	t.metrics = metrics.NewTrainer(t.cfg.Metrics)
	t.ps = timedPservers{pservers: dynamicPservers{ps}, m: t.metrics, clock: t.clock}
	t.master = &masterConn{t: t}
	defer t.master.close()
	t.lease = session.Lease()
	reg, err := t.registerWhileLeased(ctx, session)
	if err != nil {
		return t.endOr(ctx, err)
	}
	if t.spec.Mode == jobspec.ModeSync {
		wctx, cancel := finishOnStop(ctx, t.clock, leaveGrace)
		t.stop = ctx
		err = t.runSync(wctx, reg.NextStep)
		cancel()
	} else {
		actx, cancel := stopOnLeaseLoss(ctx, session)
		err = leaseLostOr(ctx, actx, t.runAsync(actx))
		cancel(nil)
	}
	return t.endOr(ctx, err)
}

// newTrainer reads the job's spec and sizes the parameter buffers for it.
func newTrainer(ctx context.Context, cli *clientv3.Client, cfg Config) (*trainer, error) {
	t := &trainer{cfg: cfg, cli: cli, log: cfg.Log, clock: clock.Or(cfg.Clock), data: newChunkCache(256)}
	if t.log == nil {
		t.log = slog.New(slog.DiscardHandler)
	}
	plane, err := cfg.DataPlane()
	if err == nil {
		t.creds, err = plane.Dial()
	}
	if err != nil {
		return nil, fmt.Errorf("trainer: %w", err)
	}
	rec, rev, err := coord.GetJobRecord(ctx, cli, cfg.Job)
	if err != nil {
		return nil, fmt.Errorf("trainer: read job: %w", err)
	}
	if err := coord.CheckJobRev(cfg.Job, cfg.JobRev, rev); err != nil {
		return nil, fmt.Errorf("trainer: %w", err)
	}
	t.spec, t.jobRev = &rec.Spec, rev
	roots, err := cfg.Roots(cfg.DataDir, t.spec)
	if err != nil {
		return nil, fmt.Errorf("trainer: the job's roots: %w", err)
	}
	t.roots, t.data.open = roots, roots.Open // a shard symlinked out of the roots since submit is refused
	threads := 0                             // GOMAXPROCS
	if cfg.OwnsRuntime {
		threads = roleruntime.LimitComputeProcs(t.spec.Resources.Trainer.CPU, len(cfg.ComputeCPUs), t.log)
	}
	if t.layout, err = client.NewLayoutWith(t.spec, model.Options{Threads: threads, Pin: t.pinner()}); err != nil {
		return nil, err
	}
	// The built-in models compute each micro-batch on threads threads;
	// the kernels' name says which trainers give bit-identical gradients.
	t.log.Info("compute", "kernels", model.Kernels(), "threads", cmp.Or(threads, runtime.GOMAXPROCS(0)))
	if w := model.KernelWarning(); w != "" {
		t.log.Warn(w)
	}
	if n := model.PinNote(); n != "" {
		t.log.Info("kernels pinned", "note", n)
	}
	t.params, t.grads = t.layout.NewParams(), t.layout.NewParams()
	t.rec = newRecState(t.layout)
	return t, nil
}

// registerWhileLeased registers (see register) while its lease lives: a
// trainer stalled past its lease as it registers (SIGSTOP, a frozen VM)
// would retry under a lease etcd no longer has ("requested lease not
// found") until the job ended. It stops with errLeaseLost instead, and its
// agent runs it anew under a new lease, without counting a crash.
func (t *trainer) registerWhileLeased(ctx context.Context, session *concurrency.Session) (*api.RegisterTrainerResponse, error) {
	lctx, cancel := stopOnLeaseLoss(ctx, session)
	defer cancel(nil)
	reg, err := t.register(lctx, int64(session.Lease()))
	if err = leaseLostOr(ctx, lctx, err); err != nil {
		return nil, err
	}
	return reg, nil
}

// register gets the trainer's dense ID from the master, and where to start.
func (t *trainer) register(ctx context.Context, lease int64) (*api.RegisterTrainerResponse, error) {
	var reg *api.RegisterTrainerResponse
	err := t.master.call(ctx, "register with the master", func(m api.MasterClient) error {
		var err error
		reg, err = m.RegisterTrainer(ctx, &api.RegisterTrainerRequest{Worker: t.cfg.Worker, LeaseId: lease})
		return err
	})
	if err != nil {
		return nil, err
	}
	t.id = int(reg.TrainerId)
	t.log.Info("registered", "trainer_id", t.id, "trainers", reg.Trainers, "next_step", reg.NextStep)
	return reg, nil
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
	if program.IsProgramError(err) && ctx.Err() == nil {
		t.failJobForProgram(ctx, err)
		return err
	}
	if state, ended := t.jobEnded(ctx); ended {
		t.log.Info("job ended", "state", state)
		return nil
	}
	return err
}

// jobEnded reports whether the job reached a terminal state (false when
// etcd cannot say).
func (t *trainer) jobEnded(ctx context.Context) (api.JobState, bool) {
	st, err := coord.JobState(ctx, t.cli, t.cfg.Job)
	return st.State, err == nil && api.Terminal(st.State)
}

// psErr re-discovers the pservers after a transient failure: the one that
// failed may be restarting at a new address.
func (t *trainer) psErr(ctx context.Context, err error) error {
	if transient(err) {
		rctx, cancel := clock.WithTimeout(ctx, t.clock, 2*time.Second)
		defer cancel()
		if rerr := t.ps.Refresh(rctx); rerr != nil {
			t.log.Debug("pservers not all back yet", "err", rerr)
		}
	}
	return err
}

// transient errors are retried in place: those that say the master or
// pserver called may be gone or moving (client.PeerGone). Aborted (a
// rollback) is not one: it sends a sync trainer back to the master (see
// resync).
func transient(err error) bool { return client.PeerGone(err) }

// compute puts the gradient sums of ex in t.grads and returns the loss
// sum. A built-in model tells progress (when not nil) as it computes
// (computeWhilePushing); a micro-batch of no records tells every
// parameter final, zeros, and released at once.
func (t *trainer) compute(ex []dataset.Example, progress *model.Progress) (float64, error) {
	switch {
	case t.prog == nil && len(ex) > 0:
		// The built-in model writes the gradients over the last
		// micro-batch's: no pass clearing them before the forward pass.
		if progress == nil {
			progress = &model.Progress{}
		}
		progress.Overwrite = true
	case t.prog != nil && len(ex) > 0 && t.prog.Overwrites():
		// So does a program that accepted it (t.grads are its shared ones).
	default:
		for _, g := range t.grads {
			clear(g) // a program adds into them; an empty micro-batch sums to zeros
		}
	}
	if len(ex) == 0 {
		progress.Finish(len(t.grads))
		return 0, nil
	}
	var loss float64
	var err error
	t.computer.run(func() { loss, err = t.computeBatch(ex, progress) })
	return loss, err
}

// computeBatch is compute's gradient of ex's records, in t.batch.
func (t *trainer) computeBatch(ex []dataset.Example, progress *model.Progress) (float64, error) {
	t.batch = dataset.ToBatchReusing(t.batch, ex)
	start := t.clock.Now()
	loss, err := t.gradient(t.batch, progress)
	end := t.clock.Now()
	// A failed computation ends the trainer or is retried whole, and a
	// stopped one (ahead.go) is not pushed: neither is a micro-batch's
	// time. One started ahead counts its waits for parameters; a
	// program's waits for the answer before it too, so it counts from
	// that one's end.
	if err != nil || (progress != nil && progress.Stopped) {
		return loss, err
	}
	before := t.computedAt.Swap(end.UnixNano())
	if t.prog != nil && progress != nil && progress.Await != nil && before > start.UnixNano() {
		start = time.Unix(0, before)
	}
	t.metrics.Computed(end.Sub(start))
	return loss, err
}

func safeMean(sum float64, n int) float64 {
	if n == 0 {
		return 0
	}
	return sum / float64(n)
}
