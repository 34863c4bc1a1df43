package clock

import (
	"context"
	"time"
)

// System is the wall clock, with Go's monotonic clock.
type System struct{}

// processStart is the origin of System.Monotonic; it carries the monotonic
// reading that time.Since measures from.
var processStart = time.Now()

// Now returns time.Now.
func (System) Now() time.Time { return time.Now() }

// Monotonic returns the monotonic time since the process started.
func (System) Monotonic() time.Duration { return time.Since(processStart) }

// Since returns time.Since.
func (System) Since(t time.Time) time.Duration { return time.Since(t) }

// NewTimer returns a time.Timer.
func (System) NewTimer(d time.Duration) Timer { return systemTimer{time.NewTimer(d)} }

// AfterFunc returns time.AfterFunc.
func (System) AfterFunc(d time.Duration, f func()) Timer {
	return systemTimer{time.AfterFunc(d, f)}
}

// NewTicker returns a time.Ticker.
func (System) NewTicker(d time.Duration) Ticker { return systemTicker{time.NewTicker(d)} }

// After returns time.After.
func (System) After(d time.Duration) <-chan time.Time { return time.After(d) }

// Sleep waits d or until ctx ends.
func (System) Sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

type systemTimer struct{ t *time.Timer }

func (s systemTimer) C() <-chan time.Time        { return s.t.C }
func (s systemTimer) Stop() bool                 { return s.t.Stop() }
func (s systemTimer) Reset(d time.Duration) bool { return s.t.Reset(d) }

type systemTicker struct{ t *time.Ticker }

func (s systemTicker) C() <-chan time.Time   { return s.t.C }
func (s systemTicker) Stop()                 { s.t.Stop() }
func (s systemTicker) Reset(d time.Duration) { s.t.Reset(d) }
