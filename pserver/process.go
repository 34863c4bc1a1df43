package pserver

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"os"
	"sync"
	"sync/atomic"

	"github.com/gtrain/gtrain/api"
	"github.com/gtrain/gtrain/checkpoint"
	"github.com/gtrain/gtrain/coord"
	"github.com/gtrain/gtrain/coord/schema"
	"github.com/gtrain/gtrain/internal/clock"
	"github.com/gtrain/gtrain/internal/confine"
	"github.com/gtrain/gtrain/internal/jobdir"
	"github.com/gtrain/gtrain/internal/roleruntime"
	"github.com/gtrain/gtrain/jobspec"
	"github.com/gtrain/gtrain/metrics"
	"github.com/gtrain/gtrain/model"
	"github.com/gtrain/gtrain/pserver/client"
	"github.com/gtrain/gtrain/pserver/wire"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/concurrency"
	"google.golang.org/grpc"
)

// process is one run of `gtraind pserver`: the shard it serves and how it
// is registered and checkpointed.
type process struct {
	cfg    Config
	cli    *clientv3.Client
	spec   *jobspec.Spec
	roots  confine.Roots // where the job's paths are opened (rolecfg.Common.Roots)
	mode   jobspec.Mode
	name   string // the worker name, "pserver-<index>", in events
	key    string // the registration key, held under session's lease
	layout *client.Layout
	// memLimit is the soft memory limit tuneRuntime set (0: the process
	// does not own its runtime); watchTables raises it as tables grow.
	memLimit int64
	shard    *Shard
	driver   shardDriver // times the copies a restore makes of a snapshot being written
	clock    clock.Clock
	store    *checkpoint.Store
	rec      *checkpoint.EtcdRecorder
	session  *concurrency.Session
	jobRev   int64 // the create revision of the job's record: the job's identity with its name
	record   schema.PserverRecord
	// ckptHealth is the checkpointer's: whether writes fail, and why.
	ckptHealth ckptHealth
	serverOpts []grpc.ServerOption // TLS and the job credential's check
	log        *slog.Logger
	metrics    *metrics.Pserver // nil: none
	// programInit holds the initial values a model program declared
	// (model.kind program); nil for a built-in model.
	programInit [][]float32
	// warm holds, per parameter, the values of a warm start (init_from);
	// nil for one that starts from the seed (or the program's values).
	warm [][]float32
	// warmSlots[k][j] is slot k of parameter j's optimizer state in a warm
	// start with init_from.optimizer_state (nil: zeros); stepBase is the
	// steps its model had taken (adam's bias correction continues them).
	warmSlots [][][]float32
	stepBase  int64
	// warmRows holds, per embedding table, the rows of a warm start this
	// pserver owns (nil: none).
	warmRows map[string]*model.TableRows
	// recMu guards record once the process serves: the checkpointer and
	// the table memory watch change it, publish reads it.
	recMu sync.Mutex
	// marked is the step of the newest checkpoint marked durable; saved
	// is signalled after each (finalCheckpoint waits on them).
	marked atomic.Int64
	saved  chan struct{}
	// gen is the layout generation served (zero: the spec's, never re-sharded).
	gen schema.LayoutRecord
	// stopRegions stops taking trainers' regions and drops them (nil: none
	// taken), as the generation ends.
	stopRegions func()
}

// runGeneration serves pserver cfg.Index of cfg.Job in layout generation
// gen until the job ends (nil), the layout moves on (errNewLayout: see Run)
// or the process loses its registration (error: the agent restarts it).
func runGeneration(ctx context.Context, cli *clientv3.Client, cfg Config, gen schema.LayoutRecord) error {
	ctx, cancel := context.WithCancel(ctx) // ends this generation's goroutines
	defer cancel()
	p, err := newProcess(ctx, cli, cfg)
	if err != nil {
		return err
	}
	if err := p.adoptLayout(gen); err != nil {
		return err
	}
	if p.session, err = coord.NewSession(ctx, cli, cfg.SessionTTL); err != nil {
		return fmt.Errorf("pserver %d: etcd session: %w", cfg.Index, err)
	}
	defer p.session.Close()
	lis, err := p.claimAndRestore(ctx)
	if err != nil {
		return fmt.Errorf("pserver %d: %w", cfg.Index, err)
	}
	srv, serveErr := p.serve(lis, p.listenLocal())
	defer func() {
		srv.Stop()
		if p.stopRegions != nil {
			p.stopRegions()
		}
	}()
	if err := p.announceReady(ctx); err != nil {
		return err
	}
	return p.runUntilEnd(ctx, srv, serveErr)
}

// newProcess reads the job and builds the shard of cfg.Index, at the
// initial values.
func newProcess(ctx context.Context, cli *clientv3.Client, cfg Config) (*process, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	p := &process{cfg: cfg, cli: cli, log: cfg.Log, clock: clock.Or(cfg.Clock), name: jobspec.PserverName(cfg.Index), key: coord.PserverKey(cfg.Job, cfg.Index),
		saved: make(chan struct{}, 1)}
	if p.log == nil {
		p.log = slog.New(slog.DiscardHandler)
	}
	plane, err := cfg.DataPlane()
	if err == nil {
		p.serverOpts, err = plane.ServerOptions()
	}
	if err != nil {
		return nil, fmt.Errorf("pserver %d: %w", cfg.Index, err)
	}
	rec, rev, err := coord.GetJobRecord(ctx, cli, cfg.Job)
	if err != nil {
		return nil, fmt.Errorf("pserver %d: read job: %w", cfg.Index, err)
	}
	if err := coord.CheckJobRev(cfg.Job, cfg.JobRev, rev); err != nil {
		return nil, fmt.Errorf("pserver %d: %w", cfg.Index, err)
	}
	p.spec, p.jobRev = &rec.Spec, rev
	if p.roots, err = cfg.Roots(cfg.DataDir, p.spec); err != nil {
		return nil, fmt.Errorf("pserver: the job's roots: %w", err)
	}
	if cfg.Index >= p.spec.Pservers {
		return nil, fmt.Errorf("pserver: Index %d out of range: job %s has %d pservers: %w", cfg.Index, cfg.Job, p.spec.Pservers, errIndexOutOfRange)
	}
	if p.layout, err = client.NewLayout(p.spec); err != nil {
		return nil, err
	}
	if err := p.declareProgram(ctx); err != nil {
		return nil, err
	}
	if err := p.loadInitModel(); err != nil {
		return nil, err
	}
	p.mode = p.spec.Mode
	shardCfg := ShardConfig{Mode: p.mode, MicroBatches: p.spec.MicroBatches(), Blocks: client.BlocksOf(p.layout.Blocks, cfg.Index), Optimizer: OptimizerOf(p.spec),
		Frozen: frozenParams(p.spec, p.layout.Params), InitSlots: p.initSlots, StepBase: p.stepBase, Tables: p.tables()}
	if p.shard, err = NewShard(shardCfg, p.init); err != nil {
		return nil, err
	}
	p.driver = newShardDriver(p.shard, p.clock)
	if cfg.OwnsRuntime {
		p.memLimit = tuneRuntime(p.shard, p.log)
		roleruntime.LimitProcs(p.spec.Resources.Pserver.CPU, p.log)
	}
	p.metrics = metrics.NewPserver(cfg.Metrics, p.shard.Step)
	return p, nil
}

// TablesOf is the embedding tables of a job (jobspec.EmbeddingTables:
// the recommender's, one per id field, or those its program declared),
// its rows initialised from the job's seed, uniform in ±init_scale, and
// updated by the field's optimizer with the job's hyper-parameters.
func TablesOf(spec *jobspec.Spec) []TableConfig {
	var out []TableConfig
	for _, t := range spec.EmbeddingTables() {
		opt := OptimizerOf(spec)
		opt.Kind = spec.TableOptimizer(t.Field)
		ts := spec.Model.Tables[t.Field]
		out = append(out, TableConfig{Name: t.Field, Dim: t.Dim, Vocab: ts.Vocab, InitScale: float32(ts.InitScale), Seed: int64(spec.Seed),
			Optimizer: opt.WithDefaults()})
	}
	return out
}

// tables is TablesOf the job, each starting with the warm start's rows
// this pserver owns.
func (p *process) tables() []TableConfig {
	cfgs := TablesOf(p.spec)
	for i := range cfgs {
		cfgs[i].Start = p.warmRows[cfgs[i].Name]
	}
	return cfgs
}

// OptimizerOf maps the job spec's optimizer section.
func OptimizerOf(spec *jobspec.Spec) OptimizerConfig {
	o := spec.Optimizer
	c := OptimizerConfig{Kind: o.Kind, LearningRate: o.LearningRate,
		Beta1: o.Beta1, Beta2: o.Beta2, Epsilon: o.Epsilon}.WithDefaults()
	// Set after WithDefaults, which would turn a written momentum 0 into
	// 0.9; the spec already holds the default when the field was omitted.
	c.Momentum = o.MomentumValue()
	return c
}

func (p *process) init(b client.Block, dst []float32) {
	if p.warm != nil && p.warm[b.Param] != nil {
		copy(dst, p.warm[b.Param][b.Offset:b.Offset+len(dst)])
		return
	}
	if p.programInit != nil {
		copy(dst, p.programInit[b.Param][b.Offset:b.Offset+len(dst)])
		return
	}
	if p.layout.Rec != nil {
		p.layout.Rec.InitRange(p.spec.Seed, b.Param, b.Offset, dst)
		return
	}
	model.InitRange(p.layout.Model, p.spec.Seed, b.Param, b.Offset, dst)
}

// claimAndRestore takes the index, then (only then: one live process per
// index touches its checkpoints) opens the checkpoint store and restores the
// shard. It returns the listener the registration announces.
func (p *process) claimAndRestore(ctx context.Context) (lis net.Listener, err error) {
	if lis, err = net.Listen("tcp", p.cfg.ListenAddr); err != nil {
		return nil, fmt.Errorf("listen on %s: %w", p.cfg.ListenAddr, err)
	}
	defer func() {
		if err != nil {
			lis.Close()
		}
	}()
	p.record = schema.PserverRecord{Index: p.cfg.Index, Addr: lis.Addr().String(), Node: p.cfg.Node, PID: os.Getpid(), Host: coord.HostID(),
		Generation: p.gen.Generation}
	if err := p.claim(ctx); err != nil {
		return nil, err
	}
	if err := p.openStore(); err != nil {
		return nil, err
	}
	if err := p.restoreAtStart(ctx); err != nil {
		return nil, err
	}
	return lis, nil
}

// openStore opens this index's checkpoints, recorded in etcd.
func (p *process) openStore() error {
	p.rec = checkpoint.NewEtcdRecorder(p.cli, func(i int) string { return coord.CheckpointRecordKey(p.cfg.Job, i) })
	// A checkpoint record is written only while this process holds the index.
	p.rec.Guard = []clientv3.Cmp{p.holdsIndex()}
	cfg := checkpoint.Config{Identity: checkpoint.Identity{Job: p.cfg.Job, Rev: p.jobRev},
		Dir: jobdir.Checkpoints(p.cfg.DataDir, p.spec), Paths: p.roots, Keep: p.spec.Checkpoint.Keep, Index: p.cfg.Index,
		KeepSteps: func(ctx context.Context) ([]int64, error) { return coord.KeptGlobalSteps(ctx, p.cli, p.cfg.Job) },
		// A restore loads only a file whose sha256 a record holds: the
		// newest's record, or an older step's mark.
		StepRecord: coord.CheckpointMarkRecords(p.cli, p.cfg.Job, jobspec.PserverName(p.cfg.Index))}
	var err error
	p.store, err = checkpoint.NewStore(cfg, p.rec, p.log)
	return err
}

// serve starts the gRPC server on lis, and on local too when not nil; the
// end of lis's serving arrives on the channel (local's is only logged: its
// clients then fail as with a gone pserver, and find it again by its
// registration).
func (p *process) serve(lis, local net.Listener) (*grpc.Server, <-chan error) {
	srv := grpc.NewServer(append(wire.ServerOptions(), p.serverOpts...)...)
	api.RegisterPServerServer(srv, NewServer(p.cfg.Index, p.shard, p.restoreStep, p.clock).CheckTerm(func(ctx context.Context) (int64, error) {
		return coord.LeaderTerm(ctx, p.cli, coord.ElectionPrefix(p.cfg.Job))
	}).WithRegions(p.serveRegions()))
	serveErr := make(chan error, 1)
	go func() { serveErr <- srv.Serve(lis) }()
	if local != nil {
		go func() {
			if err := srv.Serve(wire.LocalListener(local)); err != nil {
				p.log.Warn("local socket no longer served", "err", err)
			}
		}()
	}
	return srv, serveErr
}

// announceReady publishes that the shard is restored and serving, so
// trainers and the master connect.
func (p *process) announceReady(ctx context.Context) error {
	p.record.RestoredStep = p.shard.Step()
	p.record.CheckpointStep = p.shard.Step()
	p.record.Ready = true
	if err := p.publish(ctx); err != nil {
		return err
	}
	p.log.Info("pserver serving", "addr", p.record.Addr, "step", p.shard.Step(),
		"blocks", len(p.shard.Blocks()), "floats", client.ServerSizes(p.layout.Blocks, p.spec.Pservers)[p.cfg.Index])
	return nil
}

// runUntilEnd checkpoints while serving, until the job ends or something
// this process depends on fails.
func (p *process) runUntilEnd(ctx context.Context, srv *grpc.Server, serveErr <-chan error) error {
	ckErr := make(chan error, 1)
	go func() { ckErr <- p.checkpointer(ctx) }()
	if p.mode == jobspec.ModeAsync {
		go p.timedSnapshots(ctx)
	}
	if len(p.spec.Model.Fields) > 0 {
		request, err := p.spec.Resources.Pserver.MemoryBytes()
		if err != nil {
			request = 0 // checked at submit: not expected
		}
		go p.watchTables(ctx, p.memLimit, request)
	}
	ended := coord.WatchJobEnd(ctx, p.cli, p.cfg.Job)
	relayout := p.watchLayout(ctx)
	select {
	case <-relayout:
		p.log.Info("the layout moved on; re-sharding", "generation", p.gen.Generation, "step", p.shard.Step())
		return errNewLayout
	case <-ended:
		if p.mode == jobspec.ModeAsync {
			p.finalCheckpoint(ctx, srv)
		}
		p.log.Info("job ended; pserver exits", "step", p.shard.Step())
		return nil
	case <-p.session.Done():
		return fmt.Errorf("pserver %d: %w", p.cfg.Index, coord.ErrSessionLost)
	case err := <-serveErr:
		return fmt.Errorf("pserver %d: serve: %w", p.cfg.Index, err)
	case err := <-ckErr:
		return fmt.Errorf("pserver %d: %w", p.cfg.Index, err)
	case <-ctx.Done():
		return nil
	}
}

func (p *process) event(ctx context.Context, what string) {
	p.log.Warn(what)
	_ = coord.AppendEvent(ctx, p.cli, p.cfg.Job, what)
}
