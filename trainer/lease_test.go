package trainer

import (
	"context"
	"errors"
	"log/slog"
	"testing"
	"time"

	"github.com/gtrain/gtrain/coord"
	"github.com/gtrain/gtrain/internal/etcdtest"
)

// An async trainer whose registration lease ended (a stall past its TTL)
// stops: no call for work, no report of the task it held.
func TestAsyncTrainerStopsOnceItsLeaseIsGone(t *testing.T) {
	srv := etcdtest.Start(t)
	cli := etcdtest.Dial(t, srv.Endpoint)
	session, err := coord.NewSession(t.Context(), cli, 2)
	if err != nil {
		t.Fatal(err)
	}
	defer session.Close()
	tr := &trainer{cli: cli, lease: session.Lease(), log: slog.New(slog.DiscardHandler)}
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
