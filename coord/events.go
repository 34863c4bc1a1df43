package coord

import (
	"context"
	"fmt"
	"slices"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// MaxJobEvents is how many events a job keeps: appending beyond it deletes
// the oldest, so a job that runs for weeks (a restart loop, a checkpoint
// warning every few minutes) cannot grow etcd without bound. A thousand is
// far more than `gctl job status` shows and a few hundred KiB at most.
const MaxJobEvents = 1000

// CommitWithEvents is Commit recording events of job in the same
// transaction (EventOp): an event about a change is there if and only if
// the change is. The job then keeps its newest MaxJobEvents, as after
// AppendEvent.
func (l *Leadership) CommitWithEvents(ctx context.Context, job string, events []string, ops ...clientv3.Op) error {
	return l.commitWithEvents(ctx, job, nil, events, ops)
}

// commitWithEvents is CommitWithEvents with comparisons that must hold as
// well as the leadership.
func (l *Leadership) commitWithEvents(ctx context.Context, job string, cmps []clientv3.Cmp, events []string, ops []clientv3.Op) error {
	ops = slices.Clone(ops) // the caller's, when variadic
	for _, what := range events {
		ops = append(ops, EventOp(job, what))
	}
	if err := l.commitIf(ctx, cmps, ops); err != nil {
		return err
	}
	if len(events) > 0 {
		// Committed: a trim that fails now is done by the next event's.
		_ = TrimEvents(ctx, l.cli, job)
	}
	return nil
}

// TrimEvents deletes job's oldest events beyond MaxJobEvents. Event keys
// sort by time, so the oldest are the first of a range read. Two trims at
// once may delete a few more than needed; never a newer event before an
// older one.
func TrimEvents(ctx context.Context, kv clientv3.KV, job string) error {
	return trimEvents(ctx, kv, job, MaxJobEvents)
}

func trimEvents(ctx context.Context, kv clientv3.KV, job string, keep int) error {
	prefix := EventPrefix(job)
	n, err := kv.Get(ctx, prefix, clientv3.WithPrefix(), clientv3.WithCountOnly())
	if err != nil {
		return fmt.Errorf("count events of job %s: %w", job, err)
	}
	excess := n.Count - int64(keep)
	if excess <= 0 {
		return nil
	}
	oldest, err := kv.Get(ctx, prefix, clientv3.WithPrefix(), clientv3.WithKeysOnly(),
		clientv3.WithLimit(excess), clientv3.WithRev(n.Header.Revision))
	if err != nil {
		return fmt.Errorf("list old events of job %s: %w", job, err)
	}
	if len(oldest.Kvs) == 0 {
		return nil
	}
	last := string(oldest.Kvs[len(oldest.Kvs)-1].Key)
	if _, err := kv.Delete(ctx, prefix, clientv3.WithRange(last+"\x00")); err != nil {
		return fmt.Errorf("delete old events of job %s: %w", job, err)
	}
	return nil
}
