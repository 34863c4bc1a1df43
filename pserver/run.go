package pserver

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/gtrain/gtrain/api"
	"github.com/gtrain/gtrain/checkpoint"
	"github.com/gtrain/gtrain/coord"
	"github.com/gtrain/gtrain/jobspec"
	"github.com/gtrain/gtrain/model"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/concurrency"
	"google.golang.org/grpc"
)

// Config configures the `gtraind pserver` process.
type Config struct {
	Job        string
	Index      int
	Node       string
	DataDir    string        // the agent's data dir; default checkpoints under DataDir/jobs/JOB/checkpoints
	ListenAddr string        // host:port; port 0 picks a free one
	SessionTTL int           // seconds; the registration dies this long after the process
	ClaimWait  time.Duration // how long to wait for a live previous holder's lease to expire
	Log        *slog.Logger
}

// DefaultConfig returns a config with the defaults filled in.
func DefaultConfig() Config {
	return Config{ListenAddr: "127.0.0.1:0", SessionTTL: 5, ClaimWait: 60 * time.Second}
}

// Validate names the bad field.
func (c Config) Validate() error {
	switch {
	case c.Job == "":
		return errors.New("pserver: Job must be set")
	case c.Index < 0:
		return fmt.Errorf("pserver: Index must be >= 0, got %d", c.Index)
	case c.DataDir == "":
		return errors.New("pserver: DataDir must be set")
	case c.SessionTTL < 1:
		return fmt.Errorf("pserver: SessionTTL must be >= 1, got %d", c.SessionTTL)
	}
	return nil
}

// CheckpointDir is where a job's checkpoints live.
func CheckpointDir(spec *jobspec.Spec, dataDir string) string {
	if spec.Checkpoint.Dir != "" {
		return spec.Checkpoint.Dir
	}
	return filepath.Join(dataDir, "jobs", spec.Name, "checkpoints")
}

type process struct {
	cfg     Config
	cli     *clientv3.Client
	spec    *jobspec.Spec
	layout  *Layout
	shard   *Shard
	store   *checkpoint.Store
	rec     *checkpoint.EtcdRecorder
	session *concurrency.Session
	record  coord.PserverRecord
	log     *slog.Logger
}

// Run serves pserver cfg.Index of cfg.Job until the job ends (nil) or the
// process loses its registration (error: the agent restarts it).
func Run(ctx context.Context, cli *clientv3.Client, cfg Config) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	p := &process{cfg: cfg, cli: cli, log: cfg.Log}
	if p.log == nil {
		p.log = slog.New(slog.DiscardHandler)
	}
	var rec coord.JobRecord
	if _, err := coord.GetJSON(ctx, cli, coord.JobKey(cfg.Job), &rec); err != nil {
		return fmt.Errorf("pserver %d: read job: %w", cfg.Index, err)
	}
	p.spec = &rec.Spec
	if cfg.Index >= p.spec.Pservers {
		return fmt.Errorf("pserver: Index %d out of range: job %s has %d pservers", cfg.Index, cfg.Job, p.spec.Pservers)
	}
	var err error
	if p.layout, err = NewLayout(p.spec); err != nil {
		return err
	}
	mode, err := ParseMode(string(p.spec.Mode))
	if err != nil {
		return err
	}
	mine := BlocksOf(p.layout.Blocks, cfg.Index)
	p.shard, err = NewShard(ShardConfig{Mode: mode, Trainers: p.spec.Trainers, Blocks: mine, Optimizer: OptimizerOf(p.spec)}, p.init)
	if err != nil {
		return err
	}

	// Claim the index before touching checkpoints: one live process per index.
	p.session, err = coord.NewSession(ctx, cli, cfg.SessionTTL)
	if err != nil {
		return fmt.Errorf("pserver %d: etcd session: %w", cfg.Index, err)
	}
	defer p.session.Close()
	lis, err := net.Listen("tcp", cfg.ListenAddr)
	if err != nil {
		return fmt.Errorf("pserver %d: listen on %s: %w", cfg.Index, cfg.ListenAddr, err)
	}
	p.record = coord.PserverRecord{Index: cfg.Index, Addr: lis.Addr().String(), Node: cfg.Node, PID: os.Getpid()}
	key := coord.PserverKey(cfg.Job, cfg.Index)
	if err := p.claim(ctx, key); err != nil {
		lis.Close()
		return fmt.Errorf("pserver %d: %w", cfg.Index, err)
	}

	p.rec = checkpoint.NewEtcdRecorder(cli, coord.CheckpointPrefix(cfg.Job))
	// A checkpoint record is written only while this process holds the index.
	p.rec.Guard = []clientv3.Cmp{clientv3.Compare(clientv3.LeaseValue(key), "=", p.session.Lease())}
	ckcfg := checkpoint.Config{Dir: CheckpointDir(p.spec, cfg.DataDir), Keep: p.spec.Checkpoint.Keep, Index: cfg.Index}
	if p.store, err = checkpoint.NewStore(ckcfg, p.rec, p.log); err != nil {
		lis.Close()
		return fmt.Errorf("pserver %d: %w", cfg.Index, err)
	}
	if err := p.restoreAtStart(ctx, mode); err != nil {
		lis.Close()
		return fmt.Errorf("pserver %d: %w", cfg.Index, err)
	}

	srv := grpc.NewServer(ServerOptions()...)
	api.RegisterPServerServer(srv, NewServer(cfg.Index, p.shard, p.restoreStep))
	serveErr := make(chan error, 1)
	go func() { serveErr <- srv.Serve(lis) }()
	defer srv.Stop()
	p.record.RestoredStep = p.shard.Step()
	p.record.CheckpointStep = p.shard.Step()
	p.record.Ready = true
	if err := p.publish(ctx); err != nil {
		return err
	}
	p.log.Info("pserver serving", "addr", p.record.Addr, "step", p.shard.Step(),
		"blocks", len(mine), "floats", ServerSizes(p.layout.Blocks, p.spec.Pservers)[cfg.Index])

	ckErr := make(chan error, 1)
	go func() { ckErr <- p.checkpointer(ctx) }()
	if mode == Async {
		go p.timedSnapshots(ctx)
	}
	ended := coord.WatchJobEnd(ctx, cli, cfg.Job)
	select {
	case <-ended:
		p.log.Info("job ended; pserver exits", "step", p.shard.Step())
		return nil
	case <-p.session.Done():
		return fmt.Errorf("pserver %d: etcd session lost", cfg.Index)
	case err := <-serveErr:
		return fmt.Errorf("pserver %d: serve: %w", cfg.Index, err)
	case err := <-ckErr:
		return fmt.Errorf("pserver %d: %w", cfg.Index, err)
	case <-ctx.Done():
		return nil
	}
}

func (p *process) init(b Block, dst []float32) {
	model.InitRange(p.layout.Model, p.spec.Seed, b.Param, b.Offset, dst)
}

// restoreAtStart puts the shard where the job can continue from. Sync: the
// newest complete global checkpoint, so every pserver and the master agree on
// one step (the master rolls the others back to it). Async: this shard's own
// newest valid checkpoint. It never re-initialises over a checkpoint it was
// told exists: a lost one is an error.
func (p *process) restoreAtStart(ctx context.Context, mode Mode) error {
	if mode == Sync {
		var g coord.GlobalCheckpoint
		_, err := coord.GetJSON(ctx, p.cli, coord.GlobalCheckpointKey(p.cfg.Job), &g)
		switch {
		case errors.Is(err, coord.ErrNotFound) || (err == nil && len(g.Steps) == 0):
			if _, _, err := p.store.Load(ctx); err == nil {
				p.event(ctx, fmt.Sprintf("pserver-%d has checkpoints but the job has no complete global checkpoint: starting from step 0", p.cfg.Index))
			}
			return nil
		case err != nil:
			return err
		}
		// Newest complete global checkpoint first; an unusable file falls back
		// to the previous one (the master then rolls everyone back to it).
		var failures []string
		for i := len(g.Steps) - 1; i >= 0; i-- {
			err := p.restoreStep(ctx, g.Steps[i], 0)
			if err == nil {
				if len(failures) > 0 {
					p.event(ctx, fmt.Sprintf("pserver-%d fell back to checkpoint step %d: %s", p.cfg.Index, g.Steps[i], strings.Join(failures, "; ")))
				}
				return nil
			}
			failures = append(failures, fmt.Sprintf("step %d unusable: %v", g.Steps[i], err))
		}
		return fmt.Errorf("%w: no kept global checkpoint loads: %s", checkpoint.ErrCheckpointLost, strings.Join(failures, "; "))
	}
	snap, report, err := p.store.Load(ctx)
	switch {
	case errors.Is(err, checkpoint.ErrNoCheckpoint):
		return nil
	case err != nil:
		return err
	}
	for _, s := range report.Skipped {
		p.event(ctx, fmt.Sprintf("pserver-%d skipped damaged checkpoint %s (step %d): %s", p.cfg.Index, s.File, s.Step, s.Reason))
	}
	if err := p.shard.Restore(snap.Step, 0, snap.Sections); err != nil {
		return err
	}
	p.event(ctx, fmt.Sprintf("pserver-%d restarted from checkpoint step %d", p.cfg.Index, snap.Step))
	return nil
}

// restoreStep loads the checkpoint of exactly step (0: the initial values)
// and enters the master's rollback epoch. A shard already at step holds those
// very values (sync training is deterministic), so only the epoch changes.
func (p *process) restoreStep(ctx context.Context, step, epoch int64) error {
	if p.shard.Step() == step {
		p.shard.Rebase(epoch)
		return nil
	}
	if step == 0 {
		p.shard.Reinit(epoch, p.init)
		return nil
	}
	snap, err := p.store.LoadStep(ctx, step)
	if err != nil {
		return err
	}
	if err := p.shard.Restore(step, epoch, snap.Sections); err != nil {
		return err
	}
	p.log.Info("restored checkpoint", "step", step)
	p.event(ctx, fmt.Sprintf("pserver-%d restored from checkpoint step %d", p.cfg.Index, step))
	return nil
}

// checkpointer writes the snapshots the shard takes, then marks them in etcd.
func (p *process) checkpointer(ctx context.Context) error {
	for {
		var snap *Snapshot
		select {
		case snap = <-p.shard.Snapshots():
		case <-ctx.Done():
			return nil
		}
		rec, err := p.store.Save(ctx, checkpoint.Snapshot{Index: p.cfg.Index, Step: snap.Step, Sections: snap.Sections})
		p.shard.Release(snap)
		if errors.Is(err, checkpoint.ErrConflict) {
			return fmt.Errorf("checkpoint fenced: another process holds this index: %w", err)
		}
		if err != nil {
			p.log.Error("checkpoint failed; training goes on", "step", snap.Step, "err", err)
			continue
		}
		p.record.CheckpointStep = rec.Step
		mark := clientv3.OpPut(coord.CheckpointMarkKey(p.cfg.Job, rec.Step, fmt.Sprintf("pserver-%d", p.cfg.Index)), rec.File)
		if _, err := p.cli.Txn(ctx).If(p.rec.Guard...).Then(mark).Commit(); err != nil {
			p.log.Error("checkpoint mark", "err", err)
		}
		if err := p.publish(ctx); err != nil {
			return err
		}
		p.log.Info("checkpoint written", "step", rec.Step, "file", rec.File)
	}
}

// timedSnapshots takes async-mode checkpoints every checkpoint.every.
func (p *process) timedSnapshots(ctx context.Context) {
	every, steps, err := p.spec.Checkpoint.Interval()
	if err != nil {
		return
	}
	tick := time.NewTicker(max(every, 200*time.Millisecond))
	defer tick.Stop()
	last := p.shard.Step()
	for {
		select {
		case <-tick.C:
		case <-ctx.Done():
			return
		}
		now := p.shard.Step()
		if now != last && (steps == 0 || now/steps != last/steps) {
			p.shard.SnapshotNow()
			last = now
		}
	}
}

// publish (re)writes this pserver's registration under its lease.
func (p *process) publish(ctx context.Context) error {
	key := coord.PserverKey(p.cfg.Job, p.cfg.Index)
	resp, err := p.cli.Txn(ctx).If(clientv3.Compare(clientv3.LeaseValue(key), "=", p.session.Lease())).
		Then(clientv3.OpPut(key, coord.MustJSON(p.record), clientv3.WithLease(p.session.Lease()))).Commit()
	if err != nil {
		return fmt.Errorf("pserver %d: publish: %w", p.cfg.Index, err)
	}
	if !resp.Succeeded {
		return fmt.Errorf("pserver %d: registration taken over: %w", p.cfg.Index, coord.ErrFenced)
	}
	return nil
}

func (p *process) event(ctx context.Context, what string) {
	p.log.Warn(what)
	_ = coord.AppendEvent(ctx, p.cli, p.cfg.Job, what)
}
