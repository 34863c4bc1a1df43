package pserver

import (
	"context"
	"errors"
	"time"

	"github.com/gtrain/gtrain/coord"
)

// claim takes the index. A second live copy of an index is refused, never
// allowed to split the shard: while the holder lives we wait (bounded). A
// holder on this node whose process is gone is a crashed predecessor: its
// lease is revoked at once instead of waiting out its TTL, so a restart
// recovers in well under a second.
func (p *process) claim(ctx context.Context, key string) error {
	deadline := time.Now().Add(p.cfg.ClaimWait)
	for {
		err := coord.Claim(ctx, p.cli, key, coord.MustJSON(p.record), p.session.Lease())
		if err == nil || !errors.Is(err, coord.ErrClaimed) {
			return err
		}
		if p.revokeDeadHolder(ctx, key) {
			continue
		}
		if time.Now().After(deadline) {
			return err
		}
		p.log.Info("index held by another live process; waiting", "err", err)
		select {
		case <-time.After(500 * time.Millisecond):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

func (p *process) revokeDeadHolder(ctx context.Context, key string) bool {
	if p.cfg.Node == "" || !coord.RevokeIfDead(ctx, p.cli, key, p.cfg.Node, coord.ProcessAlive) {
		return false
	}
	p.log.Warn("previous holder of this index was dead; revoked its lease")
	return true
}
