package trainer

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/gtrain/gtrain/internal/retry"
)

// retryPolicy paces the calls to an unreachable master or pserver: 100ms
// doubling to 2s, jittered so that the trainers of a job do not all knock at
// once on a restarted master, for at most the job-level deadline.
func (t *trainer) retryPolicy() retry.Policy {
	return retry.Policy{
		Initial: 100 * time.Millisecond, Multiplier: 2, Max: 2 * time.Second, Jitter: 0.2,
		MaxElapsed: t.cfg.Deadline,
	}
}

// retryTransient repeats fn while it fails with a transient error, with
// backoff, bounded by the job-level deadline; it gives up at once if the
// job ended.
func (t *trainer) retryTransient(ctx context.Context, what string, fn func() error) error {
	err := retry.Do(ctx, t.retryPolicy(), func() error {
		err := fn()
		if err == nil || !transient(err) {
			return retry.Permanent(err)
		}
		if _, ended := t.jobEnded(ctx); ended {
			return retry.Permanent(ErrJobEnded)
		}
		return err
	}, retry.OnRetry(func(attempt int, err error, _ time.Duration) {
		if attempt%10 == 1 {
			t.log.Warn("retrying", "what", what, "attempt", attempt, "err", err)
		}
	}), retry.OnClock(t.clock))
	switch {
	case err == nil, errors.Is(err, ErrJobEnded), ctx.Err() != nil && errors.Is(err, ctx.Err()):
		return err
	}
	return fmt.Errorf("trainer: %s: %w", what, err)
}
