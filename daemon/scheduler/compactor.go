package scheduler

import (
	"context"
	"errors"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/gtrain/gtrain/coord"
)

// Compaction of etcd's history, for an etcd the operator runs (--dev's
// member compacts itself, see embedetcd.CompactionRetention). Every write
// (a step's master meta, a checkpoint mark, an event) adds a revision that
// etcd keeps until compacted: a long job would otherwise fill its quota.
// The cluster's scheduler compacts, so one agent does it, not every one.
const (
	// DefaultCompactEvery is how often the scheduler compacts.
	DefaultCompactEvery = 5 * time.Minute
	// DefaultCompactRetain is how much history is kept: the revisions of
	// the last 10 minutes. A watcher cut off from etcd for less resumes
	// where it was; one cut off for longer gets ErrCompacted and re-reads
	// (every watcher in gtrain does, see the README's "Long jobs").
	DefaultCompactRetain = 10 * time.Minute
)

// revisionLog remembers the revision seen at each compaction tick, to find
// the newest one that is at least retain old.
type revisionLog struct {
	retain  time.Duration
	samples []revisionSample
	done    int64 // the revision last compacted to
}

type revisionSample struct {
	at  time.Time
	rev int64
}

// add records rev seen at now and returns the revision to compact to, 0 for
// none: the newest sample taken at or before now-retain.
func (l *revisionLog) add(now time.Time, rev int64) int64 {
	l.samples = append(l.samples, revisionSample{at: now, rev: rev})
	var target int64
	n := 0
	for n < len(l.samples) && !l.samples[n].at.After(now.Add(-l.retain)) {
		target = l.samples[n].rev
		n++
	}
	l.samples = l.samples[n:]
	if target <= l.done {
		return 0
	}
	l.done = target
	return target
}

// compact compacts etcd every `every`, keeping `retain` of history, until
// ctx ends (the scheduler's term).
func (s *Scheduler) compact(ctx context.Context) {
	l := revisionLog{retain: s.compactRetain}
	tick := s.clock.NewTicker(s.compactEvery)
	defer tick.Stop()
	for {
		// Any read tells the current revision; this key is small.
		resp, err := s.cli.Get(ctx, coord.SchedulerElectionPrefix(), clientv3.WithPrefix(), clientv3.WithCountOnly())
		if err == nil {
			if rev := l.add(s.clock.Now(), resp.Header.Revision); rev > 0 {
				_, err = s.cli.Compact(ctx, rev)
				if err == nil || errors.Is(err, rpctypes.ErrCompacted) { // etcd's own auto-compaction came first
					s.log.Info("compacted etcd history", "revision", rev)
					err = nil
				}
			}
		}
		if err != nil && ctx.Err() == nil {
			s.log.Warn("etcd compaction failed; retrying at the next tick", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C():
		}
	}
}
