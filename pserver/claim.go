package pserver

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/gtrain/gtrain/coord"
	clientv3 "go.etcd.io/etcd/client/v3"
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
	resp, err := p.cli.Get(ctx, key)
	if err != nil || len(resp.Kvs) == 0 {
		return err == nil // vanished meanwhile: try again
	}
	var holder coord.PserverRecord
	if json.Unmarshal(resp.Kvs[0].Value, &holder) != nil || p.cfg.Node == "" || holder.Node != p.cfg.Node || coord.ProcessAlive(holder.PID) {
		return false
	}
	p.log.Warn("previous holder of this index is dead; revoking its lease", "pid", holder.PID)
	_, err = p.cli.Revoke(ctx, clientv3.LeaseID(resp.Kvs[0].Lease))
	return err == nil
}
