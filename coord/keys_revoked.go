package coord

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/gtrain/gtrain/coord/schema"
)

// RevokedTokenPrefix holds the bearer-token deny-list: one
// schema.RevokedToken per revoked token id.
func RevokedTokenPrefix() string { return ClusterPrefix() + "revoked-tokens/" }

// RevokedTokenKey is the entry of token id (auth.TokenIDOK keeps '/' out).
func RevokedTokenKey(id string) string { return RevokedTokenPrefix() + id }

// RevokeToken writes rec to the deny-list and deletes the entries whose
// tokens have all expired by now, so that the list stays as short as the
// tokens' lifetime allows.
func RevokeToken(ctx context.Context, cli *clientv3.Client, rec schema.RevokedToken, now time.Time) error {
	if err := PutJSON(ctx, cli, RevokedTokenKey(rec.ID), rec); err != nil {
		return fmt.Errorf("revoke token %s: %w", rec.ID, err)
	}
	list, err := ListJSON[schema.RevokedToken](ctx, cli, RevokedTokenPrefix())
	if err != nil {
		return nil // the revocation holds; the sweep waits for the next one
	}
	for _, old := range list {
		if old.Until.Before(now) {
			_, _ = cli.Delete(ctx, RevokedTokenKey(old.ID))
		}
	}
	return nil
}

// Revocations is the deny-list as one agent sees it: read once by Load,
// then kept current by Run's watch, which lists again whenever the watch
// breaks (a lost leader, a compaction, a reconnect), so that no revocation
// is missed.
type Revocations struct {
	cli   *clientv3.Client
	log   *slog.Logger
	now   func() time.Time
	retry time.Duration

	mu     sync.RWMutex
	until  map[string]time.Time
	rev    int64 // of the last list; 0: never listed
	loaded bool
}

// NewRevocations is the deny-list of cli's cluster, empty until Load.
func NewRevocations(cli *clientv3.Client, log *slog.Logger) *Revocations {
	return &Revocations{cli: cli, log: log, now: time.Now, retry: time.Second, until: map[string]time.Time{}}
}

// Revoked reports whether token id is on the list. Before the first Load
// every token counts as revoked: an agent does not accept tokens it cannot
// check.
func (r *Revocations) Revoked(id string) bool {
	r.mu.RLock()
	defer r.mu.RUnlock()
	if !r.loaded {
		return true
	}
	until, ok := r.until[id]
	return ok && r.now().Before(until)
}

// Load reads the whole list.
func (r *Revocations) Load(ctx context.Context) error {
	resp, err := r.cli.Get(ctx, RevokedTokenPrefix(), clientv3.WithPrefix())
	if err != nil {
		return fmt.Errorf("read the revoked tokens: %w", err)
	}
	until := make(map[string]time.Time, len(resp.Kvs))
	for _, kv := range resp.Kvs {
		if id, u, ok := r.decode(kv.Key, kv.Value); ok {
			until[id] = u
		}
	}
	r.mu.Lock()
	r.until, r.rev, r.loaded = until, resp.Header.Revision, true
	r.mu.Unlock()
	return nil
}

// decode is an entry's id and Until. An entry that does not decode still
// revokes its id, for as long as any token may live.
func (r *Revocations) decode(key, value []byte) (string, time.Time, bool) {
	id := strings.TrimPrefix(string(key), RevokedTokenPrefix())
	var rec schema.RevokedToken
	if err := json.Unmarshal(value, &rec); err != nil {
		r.log.Warn("undecodable token revocation; the token stays refused", "key", string(key), "err", err)
		return id, time.Unix(1<<40, 0), true
	}
	return id, rec.Until, true
}

// Run watches the list until ctx ends, starting after Load's revision.
func (r *Revocations) Run(ctx context.Context) {
	for ctx.Err() == nil {
		r.mu.RLock()
		rev := r.rev
		r.mu.RUnlock()
		if rev == 0 {
			if err := r.Load(ctx); err != nil {
				r.log.Warn("token revocations: list failed; retrying", "err", err)
				sleepCtx(ctx, r.retry)
			}
			continue
		}
		r.watch(ctx, rev+1)
		r.mu.Lock()
		r.rev = 0 // the watch broke: list again, so nothing missed is lost
		r.mu.Unlock()
	}
}

// watch applies the list's changes from rev on until the watch ends.
func (r *Revocations) watch(ctx context.Context, rev int64) {
	wctx, cancel := context.WithCancel(clientv3.WithRequireLeader(ctx))
	defer cancel()
	for resp := range r.cli.Watch(wctx, RevokedTokenPrefix(), clientv3.WithPrefix(), clientv3.WithRev(rev)) {
		if err := resp.Err(); err != nil {
			r.log.Warn("token revocations: watch broke; listing again", "err", err)
			return
		}
		r.mu.Lock()
		for _, ev := range resp.Events {
			switch ev.Type {
			case clientv3.EventTypePut:
				if id, u, ok := r.decode(ev.Kv.Key, ev.Kv.Value); ok {
					r.until[id] = u
				}
			case clientv3.EventTypeDelete:
				delete(r.until, strings.TrimPrefix(string(ev.Kv.Key), RevokedTokenPrefix()))
			}
		}
		r.mu.Unlock()
	}
}

// sleepCtx waits d or until ctx ends.
func sleepCtx(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}
