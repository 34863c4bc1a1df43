package coord

import (
	"context"
	"fmt"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/concurrency"
)

// NewSession grants a lease of ttl seconds under ctx and keeps it alive until
// the session is closed. The session deliberately does not end with ctx: a
// role stopping on SIGTERM cancels its context first and closes its session
// after, and Close must still reach etcd to revoke the lease at once, instead
// of leaving it to expire a whole TTL later.
func NewSession(ctx context.Context, cli *clientv3.Client, ttl int) (*concurrency.Session, error) {
	lease, err := cli.Grant(ctx, int64(ttl))
	if err != nil {
		return nil, fmt.Errorf("etcd lease: %w", err)
	}
	s, err := concurrency.NewSession(cli, concurrency.WithTTL(ttl), concurrency.WithLease(lease.ID),
		concurrency.WithContext(context.WithoutCancel(ctx)))
	if err != nil {
		return nil, fmt.Errorf("etcd session: %w", err)
	}
	return s, nil
}

// releaseTimeout bounds a resign or revoke at shutdown: etcd may be gone.
const releaseTimeout = 2 * time.Second

// Release resigns the leadership, so a standby takes over at once, and
// closes its session, revoking the lease. It works after the caller's
// context was cancelled.
func (l *Leadership) Release() {
	ctx, cancel := context.WithTimeout(context.Background(), releaseTimeout)
	defer cancel()
	_ = l.election.Resign(ctx)
	_ = l.session.Close()
}
