package supervisor

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

// CrashBudget counts a worker's crashes in a sliding window: a worker that
// crashes more than Limit times within Window is failing for good, not
// hiccuping, and restarting it again would only hide that.
type CrashBudget struct {
	Limit   int
	Window  time.Duration
	crashes []time.Time
}

// crash records a crash at now and returns the number of crashes within the
// window ending at now and whether that exceeds the limit.
func (b *CrashBudget) crash(now time.Time) (inWindow int, exceeded bool) {
	b.crashes = slices.DeleteFunc(b.crashes, func(t time.Time) bool { return !b.within(t, now) })
	b.crashes = append(b.crashes, now)
	return len(b.crashes), len(b.crashes) > b.Limit
}

// UsedAt counts the crashes within the window ending at now.
func (b CrashBudget) UsedAt(crashes []time.Time, now time.Time) int {
	n := 0
	for _, t := range crashes {
		if b.within(t, now) {
			n++
		}
	}
	return n
}

// within reports whether a crash at t falls in the window ending at now.
func (b CrashBudget) within(t, now time.Time) bool { return now.Sub(t) < b.Window }

// times are the crashes the budget holds, oldest first.
func (b *CrashBudget) times() []time.Time { return slices.Clone(b.crashes) }

// BudgetOf is the crash budget a job's spec asks for. A record stored before
// specs had one gets the default.
func BudgetOf(r jobspec.RestartsSpec) CrashBudget {
	window, err := r.WindowDuration()
	if err != nil || r.Limit < 1 {
		r.Limit = jobspec.DefaultRestartLimit
		window, _ = jobspec.RestartsSpec{Window: jobspec.DefaultRestartWindow}.WindowDuration()
	}
	return CrashBudget{Limit: r.Limit, Window: window}
}
