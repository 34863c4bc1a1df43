package coord

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/gtrain/gtrain/coord/schema"
	"github.com/gtrain/gtrain/internal/testing/wait"
)

// revokedID is a token id no other test of the shared etcd uses.
func revokedID(t *testing.T, suffix string) string {
	return strings.NewReplacer("/", "-", ".", "-").Replace(uniqueJob(t)) + "-" + suffix
}

// TestRevocationsWatch: an agent's list sees a revocation through its watch
// within seconds, refuses everything before its first read, ignores an
// entry whose tokens have expired, and lists again when its watch breaks
// (here: its revision compacted away while it was not watching).
func TestRevocationsWatch(t *testing.T) {
	cli := dialTest(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	now := time.Now()
	live, expired, missed := revokedID(t, "live"), revokedID(t, "expired"), revokedID(t, "missed")

	r := NewRevocations(cli, slog.Default())
	if !r.Revoked("anything") {
		t.Fatal("an unread list accepts tokens")
	}
	if err := RevokeToken(ctx, cli, schema.RevokedToken{ID: expired, Until: now.Add(-time.Second)}, now.Add(-2*time.Second)); err != nil {
		t.Fatal(err)
	}
	if err := r.Load(ctx); err != nil {
		t.Fatal(err)
	}
	if r.Revoked(live) || r.Revoked(expired) {
		t.Fatalf("revoked before any revocation: live %v, expired %v", r.Revoked(live), r.Revoked(expired))
	}
	go r.Run(ctx)
	if err := RevokeToken(ctx, cli, schema.RevokedToken{ID: live, Until: now.Add(time.Hour)}, now); err != nil {
		t.Fatal(err)
	}
	wait.Eventually(t, 5*time.Second, "the watch sees the revocation", func() (bool, string) { return r.Revoked(live), "" })
	if resp, err := cli.Get(ctx, RevokedTokenKey(expired)); err != nil || len(resp.Kvs) != 0 {
		t.Errorf("the expired entry was not swept: %v %v", resp, err)
	}

	// A list that missed a revocation and cannot watch from its revision
	// (compacted) reads the list again.
	stale := NewRevocations(cli, slog.Default())
	if err := stale.Load(ctx); err != nil {
		t.Fatal(err)
	}
	if err := RevokeToken(ctx, cli, schema.RevokedToken{ID: missed, Until: now.Add(time.Hour)}, now); err != nil {
		t.Fatal(err)
	}
	resp, err := cli.Get(ctx, "compact")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cli.Compact(ctx, resp.Header.Revision); err != nil {
		t.Fatal(err)
	}
	go stale.Run(ctx)
	wait.Eventually(t, 5*time.Second, "the list read again after its watch broke", func() (bool, string) { return stale.Revoked(missed), "" })
}
