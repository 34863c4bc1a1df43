package master

import (
	"time"

	"github.com/gtrain/gtrain/internal/clock"
)

// Clock is injected so the core can be tested without sleeps, and with
// steps of the wall clock: the project's one clock (internal/clock). The
// core reads its Now (the wall time records and events show) and its
// Monotonic time (what deadlines and intervals are measured with).
type Clock = clock.Clock

// SystemClock is the wall clock, with Go's monotonic clock.
type SystemClock = clock.System

// monotonicTime is the time the core decides by: the wall time at origin
// plus the monotonic time elapsed since. It moves only with the monotonic
// clock, so no deadline, timeout or interval follows a step of the wall
// clock; it can drift from the wall time after such a step, which is why
// records take their timestamps from Clock.Now instead.
type monotonicTime struct {
	clock  Clock
	origin time.Time
	mono0  time.Duration
}

func newMonotonicTime(clock Clock) monotonicTime {
	return monotonicTime{clock: clock, origin: clock.Now(), mono0: clock.Monotonic()}
}

func (m monotonicTime) now() time.Time {
	return m.origin.Add(m.clock.Monotonic() - m.mono0)
}

func unixNanoTime(n int64) time.Time { return time.Unix(0, n) }
