package scheduler

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/gtrain/gtrain/coord"
	"github.com/gtrain/gtrain/internal/clock"
)

// Timings of the scheduler.
const (
	// MaxPassGap is the longest time between two passes: storage checks
	// time out, and a missed watch event is caught up.
	MaxPassGap = 2 * time.Second
	// schedSettle is how long a pass waits after a change, so that a burst
	// of changes (a job's record and state, a node's two records) is taken
	// in one pass.
	schedSettle = 50 * time.Millisecond
	// resyncPause is the wait before campaigning or watching again after
	// etcd failed us.
	resyncPause = time.Second
)

// Scheduler places the cluster's jobs. Every agent runs one; the one that
// wins the election under coord.SchedulerElectionPrefix schedules, and
// every placement it writes is fenced on that leadership, so a deposed
// scheduler changes nothing. The others wait to take over.
type Scheduler struct {
	cli   *clientv3.Client
	node  string
	ttl   int
	peers Gossip
	clock clock.Clock
	log   *slog.Logger

	compactEvery, compactRetain time.Duration // see compactor.go
}

// Gossip is what the scheduler learns from the gossip ring: which nodes it
// declared down, and a poke when that changes (the agent's members).
type Gossip interface {
	IsDown(node string) bool
	Changes() <-chan struct{}
}

// Config is what the scheduler needs of the agent's configuration.
type Config struct {
	NodeName   string
	SessionTTL int // seconds, for the election's session
	// CompactEvery and CompactRetain: how often the leader compacts etcd's
	// history, and how much it keeps (compactor.go).
	CompactEvery, CompactRetain time.Duration
	Log                         *slog.Logger
}

// New is this node's scheduler; Run campaigns and, while it leads, schedules.
func New(cli *clientv3.Client, cfg Config, peers Gossip, clk clock.Clock) *Scheduler {
	return &Scheduler{cli: cli, node: cfg.NodeName, ttl: cfg.SessionTTL, peers: peers, clock: clock.Or(clk), log: cfg.Log,
		compactEvery: cfg.CompactEvery, compactRetain: cfg.CompactRetain}
}

// Run campaigns and, while it leads, schedules, until ctx ends.
func (s *Scheduler) Run(ctx context.Context) {
	for ctx.Err() == nil {
		err := s.term(ctx)
		if ctx.Err() != nil {
			return
		}
		s.log.Warn("scheduler term ended; campaigning again", "err", err)
		select {
		case <-ctx.Done():
		case <-s.clock.After(resyncPause):
		}
	}
}

// term is one campaign and, once won, one term of leadership.
func (s *Scheduler) term(ctx context.Context) error {
	sess, err := coord.NewSession(ctx, s.cli, s.ttl)
	if err != nil {
		return err
	}
	lead, err := coord.Campaign(ctx, s.cli, sess, coord.SchedulerElectionPrefix(), s.node)
	if err != nil {
		_ = sess.Close()
		return err
	}
	defer lead.Release()
	s.log.Info("this agent is the cluster's scheduler")
	return s.lead(ctx, lead)
}

// lead schedules while the leadership holds: a pass after every relevant
// change in etcd (nodes, drains, quotas, jobs) or in gossip, and at least every MaxPassGap.
func (s *Scheduler) lead(ctx context.Context, lead *coord.Leadership) error {
	lctx, cancel := context.WithCancel(ctx)
	defer cancel()
	kick := make(chan struct{}, 1)
	for _, prefix := range []string{coord.JobsPrefix(), coord.NodePrefix(), coord.NodeInfoPrefix(), coord.DrainPrefix(), coord.QuotaPrefix()} {
		go s.follow(lctx, prefix, kick)
	}
	go s.compact(lctx)
	tick := s.clock.NewTicker(MaxPassGap)
	defer tick.Stop()
	for {
		if err := s.pass(lctx, lead); err != nil && lctx.Err() == nil {
			s.log.Warn("scheduling pass failed", "err", err)
		}
		select {
		case <-lctx.Done():
			return lctx.Err()
		case <-lead.Done():
			return errors.New("the scheduler's etcd session ended")
		case <-kick:
		case <-s.peers.Changes():
		case <-tick.C():
		}
		select {
		case <-lctx.Done():
		case <-s.clock.After(schedSettle):
		}
	}
}

// follow pokes kick whenever something placement depends on changes under
// prefix: nodes, drains, and of the jobs their records, states and storage
// answers, and their global checkpoints, which release the workers held on
// a draining node (not the placements this scheduler writes, nor progress).
func (s *Scheduler) follow(ctx context.Context, prefix string, kick chan<- struct{}) {
	poke := func() {
		select {
		case kick <- struct{}{}:
		default:
		}
	}
	for ctx.Err() == nil {
		wch := s.cli.Watch(clientv3.WithRequireLeader(ctx), prefix, clientv3.WithPrefix())
		for resp := range wch {
			if resp.Err() != nil {
				break
			}
			for _, ev := range resp.Events {
				if relevantToScheduler(string(ev.Kv.Key)) {
					poke()
					break
				}
			}
		}
		poke() // the watch broke: changes may have been missed
		select {
		case <-ctx.Done():
		case <-s.clock.After(resyncPause):
		}
	}
}

func relevantToScheduler(key string) bool {
	k, ok := coord.ParseJobKey(key)
	if !ok {
		return true // a node, node info or drain key
	}
	if _, kind := coord.ParseHandoverKey(key); kind == coord.HandoverCheckpoint {
		return true
	}
	return k.Kind == coord.JobKeyRecord || k.Kind == coord.JobKeyState || k.Kind == coord.JobKeyStorage
}

// pass reads the cluster, decides, and writes the placements that change.
func (s *Scheduler) pass(ctx context.Context, lead *coord.Leadership) error {
	view, err := readCluster(ctx, s.cli)
	if err != nil {
		return err
	}
	for _, p := range view.problems {
		s.log.Error("cannot schedule a job", "err", p)
	}
	for _, u := range schedule(view, s.peers.IsDown, s.clock.Now(), newCheckToken) {
		err := coord.CommitPlacement(ctx, lead, u.job, u.fence, u.record, u.events)
		if errors.Is(err, coord.ErrFenced) {
			s.log.Info("placement not written: the job changed or leadership ended", "job", u.job)
			continue
		}
		if err != nil {
			return err
		}
		s.log.Info("placement written", "job", u.job, "gen", u.record.Gen, "workers", u.record.Nodes(), "reason", u.record.Reason)
	}
	return nil
}

// newCheckToken tells one storage check's markers from another's.
func newCheckToken() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// readCluster reads the nodes and the jobs in one consistent snapshot.
func readCluster(ctx context.Context, cli *clientv3.Client) (clusterView, error) {
	nodes, rev, err := coord.ReadNodes(ctx, cli, 0)
	if err != nil {
		return clusterView{}, err
	}
	resp, err := cli.Get(ctx, coord.JobsPrefix(), clientv3.WithPrefix(), clientv3.WithRev(rev))
	if err != nil {
		return clusterView{}, fmt.Errorf("read jobs: %w", err)
	}
	jobs, problems := clusterJobs(resp.Kvs)
	quotas, err := coord.ReadQuotas(ctx, cli, clientv3.WithRev(rev))
	if err != nil {
		return clusterView{}, fmt.Errorf("read quotas: %w", err)
	}
	return clusterView{nodes: nodes, jobs: jobs, problems: problems, quotas: quotas}, nil
}
