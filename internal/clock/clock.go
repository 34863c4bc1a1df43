package clock

import (
	"context"
	"sync"
	"time"
)

// Clock is injected so that code can be tested without sleeps, and with
// steps of the wall clock.
type Clock interface {
	// Now is the wall time: what records and events show. The System
	// clock's carries Go's monotonic reading, so Since and Sub on it measure
	// intervals a step of the wall clock does not move.
	Now() time.Time
	// Monotonic is the time since an arbitrary fixed origin by a clock that
	// a step of the wall clock (NTP, an operator) does not move: what
	// deadlines and intervals are measured with.
	Monotonic() time.Duration
	// Since is the time elapsed since t, a time this clock's Now returned.
	Since(t time.Time) time.Duration
	// NewTimer returns a timer that sends the time on its channel after d.
	NewTimer(d time.Duration) Timer
	// AfterFunc calls f in its own goroutine after d, unless stopped first.
	AfterFunc(d time.Duration, f func()) Timer
	// NewTicker returns a ticker that sends the time every d (d > 0),
	// dropping ticks a slow reader misses, as time.Ticker does.
	NewTicker(d time.Duration) Ticker
	// After is NewTimer(d).C(), for a wait that needs no Stop.
	After(d time.Duration) <-chan time.Time
	// Sleep waits d, or until ctx ends (its error then).
	Sleep(ctx context.Context, d time.Duration) error
}

// Timer is a time.Timer of some Clock.
type Timer interface {
	C() <-chan time.Time // nil for a timer of AfterFunc
	// Stop prevents the timer from firing; false if it fired or was
	// stopped already.
	Stop() bool
	// Reset makes the timer fire after d from now; false if it had fired
	// or been stopped.
	Reset(d time.Duration) bool
}

// Ticker is a time.Ticker of some Clock.
type Ticker interface {
	C() <-chan time.Time
	Stop()
	Reset(d time.Duration)
}

// Or returns c, or System when c is nil: the default of the optional Clock
// fields of the roles' configs.
func Or(c Clock) Clock {
	if c == nil {
		return System{}
	}
	return c
}

// WithTimeout is context.WithTimeout by clock c: the context ends with
// context.DeadlineExceeded after d on c. Its Deadline is its parent's: a
// deadline on another clock than the wall clock would mislead gRPC.
func WithTimeout(ctx context.Context, c Clock, d time.Duration) (context.Context, context.CancelFunc) {
	if _, ok := c.(System); ok {
		return context.WithTimeout(ctx, d)
	}
	t := &timeoutCtx{Context: ctx, done: make(chan struct{})}
	timer := c.AfterFunc(d, func() { t.end(context.DeadlineExceeded) })
	stop := context.AfterFunc(ctx, func() { t.end(ctx.Err()) })
	return t, func() {
		timer.Stop()
		stop()
		t.end(context.Canceled)
	}
}

// timeoutCtx is WithTimeout's context on a clock other than System. It has
// its own done channel, so that contexts derived from it take their error
// from its Err (DeadlineExceeded), not from the parent's cancellation.
type timeoutCtx struct {
	context.Context // the parent: Value and Deadline
	done            chan struct{}
	mu              sync.Mutex
	err             error
}

func (t *timeoutCtx) Done() <-chan struct{} { return t.done }

func (t *timeoutCtx) Err() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.err
}

// end ends the context with err unless it ended already.
func (t *timeoutCtx) end(err error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.err == nil {
		t.err = err
		close(t.done)
	}
}
