package trainer

import (
	"context"
	"errors"
	"log/slog"
	"testing"
	"time"

	"github.com/gtrain/gtrain/coord"
	"github.com/gtrain/gtrain/internal/clock"
	"github.com/gtrain/gtrain/internal/rolecfg"
	"github.com/gtrain/gtrain/internal/testing/etcdtest"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/concurrency"
)

// An async trainer whose registration lease ended (a stall past its TTL)
// stops: no call for work, no report of the task it held.
func TestAsyncTrainerStopsOnceItsLeaseIsGone(t *testing.T) {
	cli, session := leasedSession(t)
	tr := &trainer{cli: cli, lease: session.Lease(), log: slog.New(slog.DiscardHandler), clock: clock.System{}}
	if !tr.leaseAlive(t.Context()) {
		t.Fatal("leaseAlive = false for a live lease")
	}
	ctx, cancel := stopOnLeaseLoss(t.Context(), session)
	defer cancel(nil)
	if _, err := cli.Revoke(t.Context(), session.Lease()); err != nil {
		t.Fatal(err)
	}
	if tr.leaseAlive(t.Context()) {
		t.Fatal("leaseAlive = true for a revoked lease")
	}
	// master is nil: a call for work would panic.
	if err := tr.runAsync(t.Context()); !errors.Is(err, errLeaseLost) {
		t.Fatalf("runAsync without a lease: %v, want errLeaseLost", err)
	}
	select {
	case <-ctx.Done():
		if !errors.Is(context.Cause(ctx), errLeaseLost) {
			t.Fatalf("stopped with cause %v, want errLeaseLost", context.Cause(ctx))
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the trainer's context outlived its lease")
	}
	if !coord.LostContact(errLeaseLost) {
		t.Fatal("errLeaseLost is not a lost contact: the agent would count it as a crash")
	}
}

// A trainer whose lease ends while it registers (stopped as it started,
// resumed past its TTL) stops with errLeaseLost: it no longer retries under
// a lease etcd does not have until the job ends (the master answered each
// try "requested lease not found"). Here no master ever leads, so the
// registration retries until the lease goes.
func TestRegistrationStopsOnceItsLeaseIsGone(t *testing.T) {
	cli, session := leasedSession(t)
	tr := &trainer{cli: cli, cfg: Config{Common: rolecfg.Common{Job: "leaseless"}, Worker: "trainer-1"}, lease: session.Lease(), log: slog.New(slog.DiscardHandler), clock: clock.System{}}
	tr.master = &masterConn{t: tr}
	defer tr.master.close()
	done := make(chan error, 1)
	go func() {
		_, err := tr.registerWhileLeased(t.Context(), session)
		done <- err
	}()
	time.Sleep(300 * time.Millisecond) // retrying: no master
	if _, err := cli.Revoke(t.Context(), session.Lease()); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if !errors.Is(err, errLeaseLost) {
			t.Fatalf("registration after the lease ended: %v, want errLeaseLost", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the registration went on retrying after its lease ended")
	}
}

// leasedSession is a client of a fresh etcd and a session of 2 s on it.
func leasedSession(t *testing.T) (*clientv3.Client, *concurrency.Session) {
	t.Helper()
	srv := etcdtest.Start(t)
	cli := etcdtest.Dial(t, srv.Endpoint)
	session, err := coord.NewSession(t.Context(), cli, 2)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { session.Close() })
	return cli, session
}
