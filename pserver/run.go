package pserver

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"time"

	"github.com/gtrain/gtrain/api"
	"github.com/gtrain/gtrain/coord"
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
	ListenAddr string        // host:port; port 0 picks a free one
	SessionTTL int           // seconds; the registration dies this long after the process
	ClaimWait  time.Duration // how long to wait for a previous holder's lease to expire
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
	case c.SessionTTL < 1:
		return fmt.Errorf("pserver: SessionTTL must be >= 1, got %d", c.SessionTTL)
	}
	return nil
}

// Run serves pserver cfg.Index of cfg.Job until the job ends (nil) or the
// process loses its registration (error: the agent restarts it).
func Run(ctx context.Context, cli *clientv3.Client, cfg Config) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	log := cfg.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	var rec coord.JobRecord
	if _, err := coord.GetJSON(ctx, cli, coord.JobKey(cfg.Job), &rec); err != nil {
		return fmt.Errorf("pserver %d: read job: %w", cfg.Index, err)
	}
	spec := &rec.Spec
	if cfg.Index >= spec.Pservers {
		return fmt.Errorf("pserver: Index %d out of range: job %s has %d pservers", cfg.Index, cfg.Job, spec.Pservers)
	}
	layout, err := NewLayout(spec)
	if err != nil {
		return err
	}
	mode, err := ParseMode(spec.Mode)
	if err != nil {
		return err
	}
	mine := BlocksOf(layout.Blocks, cfg.Index)
	shard, err := NewShard(ShardConfig{Mode: mode, Trainers: spec.Trainers, Blocks: mine, Optimizer: OptimizerOf(spec)},
		func(b Block, dst []float32) { model.InitRange(layout.Model, spec.Seed, b.Param, b.Offset, dst) })
	if err != nil {
		return err
	}

	lis, err := net.Listen("tcp", cfg.ListenAddr)
	if err != nil {
		return fmt.Errorf("pserver %d: listen on %s: %w", cfg.Index, cfg.ListenAddr, err)
	}
	srv := grpc.NewServer(ServerOptions()...)
	api.RegisterPServerServer(srv, NewServer(cfg.Index, shard))
	serveErr := make(chan error, 1)
	go func() { serveErr <- srv.Serve(lis) }()
	defer srv.Stop()

	session, err := concurrency.NewSession(cli, concurrency.WithTTL(cfg.SessionTTL), concurrency.WithContext(ctx))
	if err != nil {
		return fmt.Errorf("pserver %d: etcd session: %w", cfg.Index, err)
	}
	defer session.Close()
	record := coord.PserverRecord{Index: cfg.Index, Addr: lis.Addr().String(), Node: cfg.Node, PID: os.Getpid()}
	if err := claim(ctx, cli, coord.PserverKey(cfg.Job, cfg.Index), coord.MustJSON(record), session.Lease(), cfg.ClaimWait, log); err != nil {
		return fmt.Errorf("pserver %d: %w", cfg.Index, err)
	}
	log.Info("pserver serving", "index", cfg.Index, "addr", record.Addr, "blocks", len(mine), "floats", ServerSizes(layout.Blocks, spec.Pservers)[cfg.Index])

	ended := coord.WatchJobEnd(ctx, cli, cfg.Job)
	select {
	case <-ended:
		log.Info("job ended; pserver exits", "step", shard.Step())
		return nil
	case <-session.Done():
		return fmt.Errorf("pserver %d: etcd session lost", cfg.Index)
	case err := <-serveErr:
		return fmt.Errorf("pserver %d: serve: %w", cfg.Index, err)
	case <-ctx.Done():
		return nil
	}
}

// claim takes the index, waiting while a previous holder's lease lives on: a
// second live copy of an index is refused, never allowed to split the shard.
func claim(ctx context.Context, cli *clientv3.Client, key, value string, lease clientv3.LeaseID, wait time.Duration, log *slog.Logger) error {
	deadline := time.Now().Add(wait)
	for {
		err := coord.Claim(ctx, cli, key, value, lease)
		if err == nil || !errors.Is(err, coord.ErrClaimed) || time.Now().After(deadline) {
			return err
		}
		log.Info("index held by another process; waiting for its lease to expire", "err", err)
		select {
		case <-time.After(500 * time.Millisecond):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}
