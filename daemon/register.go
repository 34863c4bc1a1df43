package daemon

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/concurrency"

	"github.com/gtrain/gtrain/coord"
	"github.com/gtrain/gtrain/coord/schema"
	"github.com/gtrain/gtrain/internal/retry"
)

// reregisterPolicy paces the attempts to register again after the etcd
// session was lost: every second until it works or the agent stops.
var reregisterPolicy = retry.Policy{Initial: time.Second}

// registration is this node's NodeRecord, held under an etcd session so
// that it disappears when the agent does (its liveness), plus the same
// record without a lease (coord.NodeInfoKey), so that a node that died
// stays listed, as down. If the session is lost (etcd unreachable for
// longer than the TTL) it registers again.
type registration struct {
	cli *clientv3.Client
	ttl int
	log *slog.Logger

	mu      sync.Mutex
	rec     schema.NodeRecord
	session *concurrency.Session

	lost   chan error // a fatal error: the name was taken while we were away
	cancel context.CancelFunc
	done   chan struct{}
}

// register claims the node name. A name held by another agent is waited
// for up to that agent's lease TTL (see claimWaiting); still held then, the
// holder is live, and register fails with ErrNodeNameTaken.
func register(ctx context.Context, cli *clientv3.Client, rec schema.NodeRecord, ttl int, log *slog.Logger) (*registration, error) {
	sess, err := claimWaiting(ctx, cli, rec, ttl, log)
	if err != nil {
		return nil, err
	}
	kctx, cancel := context.WithCancel(context.Background())
	r := &registration{
		cli: cli, ttl: ttl, log: log, rec: rec, session: sess,
		lost: make(chan error, 1), cancel: cancel, done: make(chan struct{}),
	}
	go r.keep(kctx)
	return r, nil
}

// claimNode claims the node name once. A holder that is a dead agent of
// this host is revoked first; any other holder makes it fail with
// ErrNodeNameTaken, naming the holder.
func claimNode(ctx context.Context, cli *clientv3.Client, rec schema.NodeRecord, ttl int) (*concurrency.Session, error) {
	sess, err := coord.NewSession(ctx, cli, ttl)
	if err != nil {
		return nil, fmt.Errorf("etcd session for node %s: %w", rec.Name, err)
	}
	err = coord.Claim(ctx, cli, coord.NodeKey(rec.Name), coord.MustJSON(rec), sess.Lease())
	if err == nil {
		if err := coord.PutJSON(ctx, cli, coord.NodeInfoKey(rec.Name), rec); err != nil {
			_ = sess.Close()
			return nil, fmt.Errorf("register node %s: %w", rec.Name, err)
		}
		return sess, nil
	}
	_ = sess.Close()
	if !errors.Is(err, coord.ErrClaimed) {
		return nil, fmt.Errorf("register node %s: %w", rec.Name, err)
	}
	if revokeDeadAgent(ctx, cli, rec) {
		return claimNode(ctx, cli, rec, ttl)
	}
	return nil, nameTaken(ctx, cli, rec.Name, err)
}

// update rewrites the record (e.g. with the bound gossip address).
func (r *registration) update(ctx context.Context, rec schema.NodeRecord) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.rec = rec
	if err := coord.PutJSON(ctx, r.cli, coord.NodeKey(rec.Name), rec, clientv3.WithLease(r.session.Lease())); err != nil {
		return err
	}
	return coord.PutJSON(ctx, r.cli, coord.NodeInfoKey(rec.Name), rec)
}

// keep registers again whenever the session is lost.
func (r *registration) keep(ctx context.Context) {
	defer close(r.done)
	for {
		r.mu.Lock()
		sess := r.session
		r.mu.Unlock()
		select {
		case <-ctx.Done():
			return
		case <-sess.Done():
		}
		r.log.Warn("etcd session lost; registering the node again")
		err := retry.Do(ctx, reregisterPolicy, func() error { return r.reclaim(ctx, sess) },
			retry.OnRetry(func(_ int, err error, _ time.Duration) {
				r.log.Warn("cannot register the node yet", "err", err)
			}))
		if errors.Is(err, ErrNodeNameTaken) {
			r.lost <- err
			return
		}
		if err != nil { // ctx ended
			return
		}
		r.log.Info("node registered again")
	}
}

// reclaim claims the node name again under a new session. The name taken
// by another live agent is a permanent failure.
func (r *registration) reclaim(ctx context.Context, lost *concurrency.Session) error {
	r.mu.Lock()
	rec := r.rec
	r.mu.Unlock()
	rctx, cancel := context.WithTimeout(ctx, etcdTimeout)
	defer cancel()
	// Our old record may outlive a broken keep-alive stream; revoking its
	// lease frees the name for us.
	_, _ = r.cli.Revoke(rctx, lost.Lease())
	next, err := claimNode(rctx, r.cli, rec, r.ttl)
	if errors.Is(err, ErrNodeNameTaken) {
		return retry.Permanent(err)
	}
	if err != nil {
		return err
	}
	r.mu.Lock()
	r.session = next
	r.mu.Unlock()
	return nil
}

// close deregisters: revoking the session's lease deletes the node's
// liveness record; its durable record stays, and shows the node down.
func (r *registration) close() {
	r.cancel()
	<-r.done
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.session.Close(); err != nil {
		r.log.Warn("cannot deregister the node; its record expires with its lease", "err", err)
	}
}

// revokeDeadAgent frees the node name held by a previous agent of this node
// whose process is gone (it was killed; its lease lives on for a TTL, and an
// etcd restart renews it): waiting it out would delay recovery for nothing.
// Only an agent of this host (coord.HostID) is judged by its PID: one on
// another host (the same --node-name given twice) is never revoked. A live
// holder (this very agent included) is refused, not revoked.
func revokeDeadAgent(ctx context.Context, cli *clientv3.Client, rec schema.NodeRecord) bool {
	return coord.RevokeIfDead(ctx, cli, coord.NodeKey(rec.Name), "", coord.ProcessAlive)
}
