package coord

import (
	"context"
	"testing"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// A role cancels its context on SIGTERM before it closes its session; the
// close must still revoke the lease, or the role's keys outlive it by a TTL.
func TestSessionCloseRevokesAfterCancel(t *testing.T) {
	cli := dialTest(t)
	ctx, cancel := context.WithCancel(t.Context())
	s, err := NewSession(ctx, cli, 30)
	if err != nil {
		t.Fatal(err)
	}
	key := Root + "session-test/held"
	if _, err := cli.Put(t.Context(), key, "x", clientv3.WithLease(s.Lease())); err != nil {
		t.Fatal(err)
	}
	cancel()
	select {
	case <-s.Done():
		t.Fatal("the session ended with its context; it must last until Close")
	default:
	}
	if err := s.Close(); err != nil {
		t.Fatalf("close after cancel: %v", err)
	}
	resp, err := cli.Get(t.Context(), key)
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Kvs) != 0 {
		t.Errorf("key %s still held after Close: the lease was not revoked", key)
	}
}

func TestLeadershipReleaseAfterCancel(t *testing.T) {
	cli := dialTest(t)
	ctx, cancel := context.WithCancel(t.Context())
	s, err := NewSession(ctx, cli, 30)
	if err != nil {
		t.Fatal(err)
	}
	prefix := Root + "session-test/election"
	lead, err := Campaign(ctx, cli, s, prefix, "me")
	if err != nil {
		t.Fatal(err)
	}
	cancel()
	lead.Release()
	if v, err := LeaderValue(t.Context(), cli, prefix); err == nil {
		t.Errorf("leader %q still elected after Release", v)
	}
}
