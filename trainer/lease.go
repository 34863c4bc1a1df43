package trainer

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/gtrain/gtrain/coord"
	"github.com/gtrain/gtrain/internal/clock"
	"go.etcd.io/etcd/client/v3/concurrency"
)

// errLeaseLost is the cause of an async trainer's stop when its registration
// lease ended under it (a stall past its TTL: SIGSTOP, a frozen VM, a long
// partition from etcd). The master has given its task to another trainer
// by then, so this one must neither push more of it nor report it. It wraps
// coord.ErrSessionLost: the agent restarts the trainer, which registers
// again, without counting it against the job's crash budget.
var errLeaseLost = fmt.Errorf("trainer: registration lease lost: %w", coord.ErrSessionLost)

// stopOnLeaseLoss returns ctx cancelled, with errLeaseLost as its cause,
// when session ends.
func stopOnLeaseLoss(ctx context.Context, session *concurrency.Session) (context.Context, context.CancelCauseFunc) {
	ctx, cancel := context.WithCancelCause(ctx)
	go func() {
		select {
		case <-session.Done():
			cancel(errLeaseLost)
		case <-ctx.Done():
		}
	}()
	return ctx, cancel
}

// leaseLostOr is errLeaseLost when err came from leased, a context of
// stopOnLeaseLoss under ctx, stopped by its lease's end (not by ctx); else err.
func leaseLostOr(ctx, leased context.Context, err error) error {
	if err != nil && errors.Is(context.Cause(leased), errLeaseLost) && ctx.Err() == nil {
		return errLeaseLost
	}
	return err
}

// leaseAlive asks etcd whether the registration lease still lives. The
// keep-alive loop notices an expired lease only at its next renewal; an
// async trainer asks before each call for work (which carries its report),
// so that, resumed after a stall, it neither reports (and counts twice) a
// task already handed to another nor takes one under an ID no longer its.
// When etcd cannot say in leaseCheckTimeout, the lease counts as alive: the
// master decides, and an etcd outage does not stop training.
func (t *trainer) leaseAlive(ctx context.Context) bool {
	if t.lease == 0 {
		return true // a trainer built without a session (tests)
	}
	ctx, cancel := clock.WithTimeout(ctx, t.clock, leaseCheckTimeout)
	defer cancel()
	resp, err := t.cli.TimeToLive(ctx, t.lease)
	return err != nil || resp.TTL > 0
}

// leaseCheckTimeout bounds leaseAlive's question to etcd.
const leaseCheckTimeout = 2 * time.Second
