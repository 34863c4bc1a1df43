package master

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"time"

	"github.com/gtrain/gtrain/coord"
	"github.com/gtrain/gtrain/internal/rolecfg"
	"github.com/gtrain/gtrain/metrics"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// Config configures the `gtraind master` process.
type Config struct {
	// Common is the job, node, job revision, session TTL, log and metrics;
	// its TLS is the node certificate the master serves trainers with and
	// dials the pservers with.
	rolecfg.Common
	DataDir    string // the agent's data dir; see jobdir.Model for where the model goes
	ListenAddr string
	LongPoll   time.Duration
	// EvalProcs is the GOMAXPROCS of the pass-end evaluation, when more
	// than in force (0: as in force). `gtraind master` runs on one core and
	// evaluates on all.
	EvalProcs int
}

// DefaultConfig returns the defaults.
func DefaultConfig() Config {
	return Config{Common: rolecfg.Common{SessionTTL: rolecfg.DefaultSessionTTL}, ListenAddr: "127.0.0.1:0", LongPoll: 2 * time.Second}
}

// Validate names the bad field.
func (c Config) Validate() error {
	if err := c.Common.Validate("master"); err != nil {
		return err
	}
	if c.DataDir == "" {
		return errors.New("master: DataDir must be set")
	}
	return nil
}

// Run campaigns for the job's mastership, then serves until training is done
// (nil) or leadership is lost (error: the agent restarts the process, which
// campaigns again as a standby).
func Run(ctx context.Context, cli *clientv3.Client, cfg Config) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	job, err := loadJob(ctx, cli, cfg)
	if err != nil {
		return err
	}
	lis, err := net.Listen("tcp", cfg.ListenAddr)
	if err != nil {
		return fmt.Errorf("master: listen on %s: %w", cfg.ListenAddr, err)
	}
	defer lis.Close()
	lead, err := elect(ctx, cli, cfg, lis.Addr().String())
	if err != nil {
		return err
	}
	defer lead.Release()
	// Authority ends with the session: everything below runs under leadCtx.
	leadCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	go cancelOnLostLead(leadCtx, cancel, lead, cfg.Log)

	err = runAsMaster(ctx, leadCtx, cancel, cli, cfg, job, lead, lis)
	if err != nil && ctx.Err() == nil && leadCtx.Err() != nil {
		// Whatever stopped first, the cause is the lapsed authority.
		return fmt.Errorf("%w (stopped at: %v)", ErrLeadershipLost, err)
	}
	return err
}

// runAsMaster runs the job as its master until it ends, leadCtx ends or
// something fails.
func runAsMaster(ctx, leadCtx context.Context, cancel context.CancelFunc, cli *clientv3.Client, cfg Config, job *jobData, lead *coord.Leadership, lis net.Listener) error {
	l, err := newLeader(leadCtx, cli, cfg, job, lead)
	if err != nil {
		return err
	}
	defer l.close()
	metrics.RegisterMaster(cfg.Metrics, l.driver)
	go l.driver.Run(leadCtx)
	if err := l.announce(leadCtx); err != nil {
		return err
	}
	if err := l.startRecovery(leadCtx, cancel); err != nil {
		return err
	}
	if err := startTrainerWatch(leadCtx, cli, cfg.Job, l.driver, cfg.Log); err != nil {
		return err
	}
	serveErr := l.serve(leadCtx, lis)
	return l.loop(ctx, leadCtx, serveErr)
}

// elect campaigns for the job's mastership on a new session and, once
// leading, records this process as the holder. The session is closed if the
// campaign fails; once leading, Leadership.Release resigns and revokes it,
// even after ctx was cancelled by a SIGTERM.
func elect(ctx context.Context, cli *clientv3.Client, cfg Config, addr string) (*coord.Leadership, error) {
	session, err := coord.NewSession(ctx, cli, cfg.SessionTTL)
	if err != nil {
		return nil, fmt.Errorf("master: etcd session: %w", err)
	}
	if coord.RevokeIfDead(ctx, cli, coord.MasterHolderKey(cfg.Job), cfg.Node, coord.ProcessAlive) {
		cfg.Log.Warn("the previous master on this node is dead; revoked its lease to take over at once")
	}
	cfg.Log.Info("campaigning for mastership", "addr", addr)
	lead, err := coord.Campaign(ctx, cli, session, coord.ElectionPrefix(cfg.Job), addr)
	if err != nil {
		_ = session.Close()
		return nil, fmt.Errorf("master: %w", err)
	}
	cfg.Log.Info("leading", "term", lead.Rev())
	holder := coord.SelfHolder(cfg.Node)
	if err := lead.Commit(ctx, clientv3.OpPut(coord.MasterHolderKey(cfg.Job), coord.MustJSON(holder), clientv3.WithLease(session.Lease()))); err != nil {
		lead.Release()
		return nil, fmt.Errorf("master: %w", err)
	}
	return lead, nil
}

// cancelOnLostLead cancels leadCtx as soon as the etcd session is lost.
func cancelOnLostLead(leadCtx context.Context, cancel context.CancelFunc, lead *coord.Leadership, log *slog.Logger) {
	select {
	case <-lead.Done():
		log.Error("etcd session lost: no longer master; stopping at once")
		cancel()
	case <-leadCtx.Done():
	}
}
