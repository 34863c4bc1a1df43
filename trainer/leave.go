package trainer

import (
	"context"
	"time"

	"github.com/gtrain/gtrain/internal/clock"
)

// leaveGrace bounds how long a sync trainer told to stop (SIGTERM: the agent
// stops it, e.g. after `gctl job scale` lowered the count) keeps working to
// finish the micro-batch it holds, so its work is not lost; then it leaves,
// and the master hands whatever it still held to the others.
const leaveGrace = 5 * time.Second

// finishOnStop returns a context that outlives ctx by at most grace on c:
// the work context of a trainer that finishes its micro-batch before
// leaving.
func finishOnStop(ctx context.Context, c clock.Clock, grace time.Duration) (context.Context, context.CancelFunc) {
	wctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	var timer clock.Timer
	stop := context.AfterFunc(ctx, func() { timer = c.AfterFunc(grace, cancel) })
	return wctx, func() {
		if !stop() && timer != nil {
			timer.Stop()
		}
		cancel()
	}
}

// leaving reports whether the trainer was told to stop: it takes no new
// micro-batch.
func (t *trainer) leaving() bool {
	return t.stop != nil && t.stop.Err() != nil
}
