package trainer

import (
	"context"
	"time"

	"github.com/gtrain/gtrain/internal/clock"
)

// followLayoutWait bounds the wait for the pservers of a new layout; those
// not back by then are found again by the next failed pull or push.
const followLayoutWait = 10 * time.Second

// followLayout re-reads the pservers when the job enters a new epoch: a
// re-shard (master/recovery/reshard.go) commits its layout generation before the
// rollback that starts the epoch, so the trainer cuts the parameters over
// the new pservers before its first pull of the epoch, without a restart.
func (t *trainer) followLayout(ctx context.Context) {
	rctx, cancel := clock.WithTimeout(ctx, t.clock, followLayoutWait)
	defer cancel()
	if err := t.ps.Refresh(rctx); err != nil {
		t.log.Warn("pservers of the new epoch not all found yet", "err", err)
	}
}
