package recovery

import (
	"context"
	"fmt"
	"time"

	"github.com/gtrain/gtrain/coord/schema"
)

// finishReshard waits for the first step committed under layout l (or the
// job's end) and records the pause: from when the master stopped handing
// out steps to then. A successor master finishing a predecessor's re-shard
// measures from the recorded wall time.
func (r *Recovery) finishReshard(ctx context.Context, l schema.LayoutRecord) error {
	for {
		_, at := r.driver.Position()
		if at > l.FromStep || r.driver.Done() {
			break
		}
		select {
		case <-r.driver.Changed():
		case <-time.After(50 * time.Millisecond):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	l.PauseMs = max(time.Since(l.Paused).Milliseconds(), 1)
	what := fmt.Sprintf("pservers re-sharded from %d to %d at global checkpoint step %d (layout generation %d): training paused %d ms",
		l.SourcePservers, l.Pservers, l.FromStep, l.Generation, l.PauseMs)
	if err := r.layouts.Finish(ctx, l, what); err != nil {
		return err
	}
	r.log.Info(what)
	return nil
}
