package master

import "time"

// Clock is injected so the core can be tested without sleeps, and with
// steps of the wall clock.
type Clock interface {
	// Now is the wall time: what records and events show.
	Now() time.Time
	// Monotonic is the time since an arbitrary fixed origin by a clock that
	// a step of the wall clock (NTP, an operator) does not move: what
	// deadlines and intervals are measured with.
	Monotonic() time.Duration
}

// SystemClock is the wall clock, with Go's monotonic clock.
type SystemClock struct{}

// processStart is the origin of SystemClock.Monotonic; it carries the
// monotonic reading that time.Since measures from.
var processStart = time.Now()

// Now returns time.Now.
func (SystemClock) Now() time.Time { return time.Now() }

// Monotonic returns the monotonic time since the process started.
func (SystemClock) Monotonic() time.Duration { return time.Since(processStart) }

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
