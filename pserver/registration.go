package pserver

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/gtrain/gtrain/coord"
	"github.com/gtrain/gtrain/internal/retry"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// claim takes the index. A second live copy of an index is refused, never
// allowed to split the shard: while the holder lives we wait (bounded). A
// holder on this node whose process is gone is a crashed predecessor: its
// lease is revoked at once instead of waiting out its TTL, so a restart
// recovers in well under a second.
func (p *process) claim(ctx context.Context) error {
	return retry.Do(ctx, claimPolicy(p.cfg.ClaimWait), func() error {
		err := p.tryClaim(ctx)
		if err == nil || !errors.Is(err, coord.ErrClaimed) {
			return retry.Permanent(err)
		}
		p.log.Info("index held by another live process; waiting", "err", err)
		return err
	}, retry.OnClock(p.clock))
}

// tryClaim claims the index once, and once more at once if the holder was a
// dead process of this node whose lease it revoked.
func (p *process) tryClaim(ctx context.Context) error {
	err := coord.Claim(ctx, p.cli, p.key, coord.MustJSON(p.record), p.session.Lease())
	if errors.Is(err, coord.ErrClaimed) && p.revokeDeadHolder(ctx) {
		err = coord.Claim(ctx, p.cli, p.key, coord.MustJSON(p.record), p.session.Lease())
	}
	return err
}

// claimPolicy asks again every 500 ms for at most wait.
func claimPolicy(wait time.Duration) retry.Policy {
	return retry.Policy{Initial: 500 * time.Millisecond, MaxElapsed: wait}
}

func (p *process) revokeDeadHolder(ctx context.Context) bool {
	if p.cfg.Node == "" || !coord.RevokeIfDead(ctx, p.cli, p.key, p.cfg.Node, coord.ProcessAlive) {
		return false
	}
	p.log.Warn("previous holder of this index was dead; revoked its lease")
	return true
}

// holdsIndex is true in etcd while this process's lease holds the index: the
// fence of every write this process makes.
func (p *process) holdsIndex() clientv3.Cmp {
	return clientv3.Compare(clientv3.LeaseValue(p.key), "=", p.session.Lease())
}

// publish (re)writes this pserver's registration under its lease.
func (p *process) publish(ctx context.Context) error {
	p.recMu.Lock()
	record := coord.MustJSON(p.record)
	p.recMu.Unlock()
	resp, err := p.cli.Txn(ctx).If(p.holdsIndex()).
		Then(clientv3.OpPut(p.key, record, clientv3.WithLease(p.session.Lease()))).Commit()
	if err != nil {
		return fmt.Errorf("pserver %d: publish: %w", p.cfg.Index, err)
	}
	if !resp.Succeeded {
		return fmt.Errorf("pserver %d: registration taken over: %w", p.cfg.Index, coord.ErrFenced)
	}
	return nil
}
