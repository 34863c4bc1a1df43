package daemon

import (
	"time"

	"github.com/gtrain/gtrain/internal/retry"
)

// restartPolicy paces a row of quick crashes: 200ms, doubling, at most 5s.
// No jitter: a worker's restarts are not a crowd.
var restartPolicy = retry.Policy{Initial: 200 * time.Millisecond, Multiplier: 2, Max: 5 * time.Second}

// restartBackoff is the pause before restart number n (1-based) of a row of
// quick crashes.
func restartBackoff(n int) time.Duration { return restartPolicy.Pause(n) }

// crashBudget counts a worker's crashes in a sliding window: a worker that
// crashes more than limit times within window is failing for good, not
// hiccuping, and restarting it again would only hide that.
type crashBudget struct {
	limit   int
	window  time.Duration
	crashes []time.Time
}

// crash records a crash at now and returns the number of crashes within the
// window ending at now and whether that exceeds the limit.
func (b *crashBudget) crash(now time.Time) (inWindow int, exceeded bool) {
	kept := b.crashes[:0]
	for _, t := range b.crashes {
		if now.Sub(t) < b.window {
			kept = append(kept, t)
		}
	}
	b.crashes = append(kept, now)
	return len(b.crashes), len(b.crashes) > b.limit
}
