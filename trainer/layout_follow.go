package trainer

import (
	"context"
	"time"

	"github.com/gtrain/gtrain/internal/clock"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
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

// layoutMoved says whether err, a pserver's refusal of this trainer's push
// as malformed (InvalidArgument: a block it does not hold, data out of a
// block's bounds) or the client's own refusal of what a pserver answered
// its pull (Unknown: a block it did not expect), came from the pservers
// moving to a new layout while the call was cut over the old one (gen): a
// re-shard ends a pserver's generation in place, and the next serves at the
// same address, so a call under way reaches the new cut. The job then rolls
// back to the re-shard's step: the trainer resyncs with the master instead
// of failing, and goes by the new layout from then on. A refusal under an
// unchanged layout is a real fault.
func (t *trainer) layoutMoved(ctx context.Context, err error, gen int64) bool {
	if c := status.Code(err); c != codes.InvalidArgument && c != codes.Unknown {
		return false
	}
	t.followLayout(ctx)
	now := t.ps.Generation()
	if now == gen {
		// The new layout's pservers may not all be found within
		// followLayoutWait (one of them a new process still starting): the
		// committed record says whether the layout moved all the same, and
		// the next epoch's followLayout finds them.
		committed, cerr := t.ps.Committed(ctx)
		if cerr != nil || committed == gen {
			return false
		}
		now = committed
	}
	t.log.Warn("the pservers moved to a new layout during the push; resyncing with the master", "layout_generation", now, "err", err)
	return true
}
