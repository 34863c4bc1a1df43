package daemon

import (
	"slices"
	"time"

	"github.com/gtrain/gtrain/internal/retry"
	"github.com/gtrain/gtrain/jobspec"
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
	b.crashes = slices.DeleteFunc(b.crashes, func(t time.Time) bool { return !b.within(t, now) })
	b.crashes = append(b.crashes, now)
	return len(b.crashes), len(b.crashes) > b.limit
}

// usedAt counts the crashes within the window ending at now.
func (b crashBudget) usedAt(crashes []time.Time, now time.Time) int {
	n := 0
	for _, t := range crashes {
		if b.within(t, now) {
			n++
		}
	}
	return n
}

// within reports whether a crash at t falls in the window ending at now.
func (b crashBudget) within(t, now time.Time) bool { return now.Sub(t) < b.window }

// times are the crashes the budget holds, oldest first.
func (b *crashBudget) times() []time.Time { return slices.Clone(b.crashes) }

// budgetOf is the crash budget a job's spec asks for. A record stored before
// specs had one gets the default.
func budgetOf(r jobspec.RestartsSpec) crashBudget {
	window, err := r.WindowDuration()
	if err != nil || r.Limit < 1 {
		r.Limit = jobspec.DefaultRestartLimit
		window, _ = jobspec.RestartsSpec{Window: jobspec.DefaultRestartWindow}.WindowDuration()
	}
	return crashBudget{limit: r.Limit, window: window}
}
