package master

import "time"

// Clock is injected so the core can be tested without sleeps.
type Clock interface{ Now() time.Time }

// SystemClock is the wall clock.
type SystemClock struct{}

// Now returns time.Now.
func (SystemClock) Now() time.Time { return time.Now() }

func unixNanoTime(n int64) time.Time { return time.Unix(0, n) }
