package clock

import (
	"context"
	"slices"
	"sync"
	"time"
)

// Fake is a Clock for tests: its time moves only by Advance, which fires
// the timers and tickers it passes, in the order of their times, and Jump,
// which steps the wall time alone (as NTP or an operator would) and fires
// nothing: timers run by the monotonic time. Safe for concurrent use.
type Fake struct {
	mu      sync.Mutex
	now     time.Time
	mono    time.Duration
	waiting []*fakeTimer  // pending timers and tickers, unordered
	changed chan struct{} // closed and replaced when waiting grows (WaitForTimers)
	seq     int64         // timers started so far: ties fire in this order
}

// NewFake returns a Fake clock whose wall time is now and monotonic time 0.
func NewFake(now time.Time) *Fake {
	return &Fake{now: now, changed: make(chan struct{})}
}

// Now returns the fake wall time.
func (f *Fake) Now() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.now
}

// Monotonic returns the fake monotonic time.
func (f *Fake) Monotonic() time.Duration {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.mono
}

// Since is Now().Sub(t).
func (f *Fake) Since(t time.Time) time.Duration { return f.Now().Sub(t) }

// Jump steps the wall time by d without moving the monotonic time: no
// timer fires.
func (f *Fake) Jump(d time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.now = f.now.Add(d)
}

// Advance moves the wall and the monotonic time by d, firing every timer
// and tick due meanwhile, earliest first; each fires as the clock reads its
// time. AfterFunc's functions run in their own goroutines, as
// time.AfterFunc's do.
func (f *Fake) Advance(d time.Duration) {
	f.mu.Lock()
	end := f.mono + d
	for {
		t := f.nextDueLocked(end)
		if t == nil {
			break
		}
		f.now = f.now.Add(t.when - f.mono)
		f.mono = t.when
		t.fireLocked(f.now)
	}
	f.now = f.now.Add(end - f.mono)
	f.mono = end
	f.mu.Unlock()
}

// nextDueLocked returns the earliest pending timer due by end, or nil.
func (f *Fake) nextDueLocked(end time.Duration) *fakeTimer {
	var next *fakeTimer
	for _, t := range f.waiting {
		if t.when <= end && (next == nil || t.when < next.when || t.when == next.when && t.seq < next.seq) {
			next = t
		}
	}
	return next
}

// Timers counts the pending timers and tickers.
func (f *Fake) Timers() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.waiting)
}

// WaitForTimers blocks until at least n timers or tickers are pending, or
// ctx ends: a test's way to know the code under test is waiting before it
// advances the clock.
func (f *Fake) WaitForTimers(ctx context.Context, n int) error {
	for {
		f.mu.Lock()
		have, changed := len(f.waiting), f.changed
		f.mu.Unlock()
		if have >= n {
			return nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// NewTimer returns a timer firing after d on the fake clock.
func (f *Fake) NewTimer(d time.Duration) Timer {
	return f.start(&fakeTimer{clock: f, c: make(chan time.Time, 1)}, d)
}

// AfterFunc calls fn in its own goroutine once the fake clock passed d.
func (f *Fake) AfterFunc(d time.Duration, fn func()) Timer {
	return f.start(&fakeTimer{clock: f, fn: fn}, d)
}

// NewTicker returns a ticker firing every d on the fake clock.
func (f *Fake) NewTicker(d time.Duration) Ticker {
	if d <= 0 {
		panic("clock: non-positive interval for NewTicker")
	}
	return fakeTicker{f.start(&fakeTimer{clock: f, c: make(chan time.Time, 1), period: d}, d)}
}

// After is NewTimer(d).C().
func (f *Fake) After(d time.Duration) <-chan time.Time { return f.NewTimer(d).C() }

// Sleep waits until the fake clock passed d, or ctx ends.
func (f *Fake) Sleep(ctx context.Context, d time.Duration) error {
	t := f.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C():
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// start schedules t d from now; a timer due already (d <= 0) fires at once.
func (f *Fake) start(t *fakeTimer, d time.Duration) *fakeTimer {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.scheduleLocked(t, d)
	return t
}

func (f *Fake) scheduleLocked(t *fakeTimer, d time.Duration) {
	f.seq++
	t.seq = f.seq
	t.when = f.mono + max(d, 0)
	if d <= 0 && t.period == 0 {
		t.fireLocked(f.now)
		return
	}
	f.waiting = append(f.waiting, t)
	close(f.changed)
	f.changed = make(chan struct{})
}

// unscheduleLocked removes t from the pending timers; false if it was not.
func (f *Fake) unscheduleLocked(t *fakeTimer) bool {
	i := slices.Index(f.waiting, t)
	if i < 0 {
		return false
	}
	f.waiting = slices.Delete(f.waiting, i, i+1)
	return true
}

// fakeTimer is a Fake's timer, AfterFunc or ticker (period > 0).
type fakeTimer struct {
	clock  *Fake
	c      chan time.Time // nil for AfterFunc
	fn     func()
	period time.Duration
	when   time.Duration // on the monotonic clock
	seq    int64         // creation order: ties fire in it
}

// fireLocked sends now (dropped if the last is unread, as a ticker drops
// it) or starts fn, and reschedules a ticker.
func (t *fakeTimer) fireLocked(now time.Time) {
	if t.period == 0 {
		t.clock.unscheduleLocked(t)
	} else {
		t.when += t.period
	}
	if t.fn != nil {
		go t.fn()
		return
	}
	select {
	case t.c <- now:
	default:
	}
}

func (t *fakeTimer) C() <-chan time.Time { return t.c }

func (t *fakeTimer) Stop() bool {
	t.clock.mu.Lock()
	defer t.clock.mu.Unlock()
	return t.clock.unscheduleLocked(t)
}

// Reset reschedules the timer d from now; a ticker ticks every d from now.
func (t *fakeTimer) Reset(d time.Duration) bool {
	t.clock.mu.Lock()
	defer t.clock.mu.Unlock()
	was := t.clock.unscheduleLocked(t)
	if t.period > 0 {
		t.period = d
	}
	t.clock.scheduleLocked(t, d)
	return was
}

// fakeTicker is a ticker: a fakeTimer whose Stop and Reset return nothing.
type fakeTicker struct{ t *fakeTimer }

func (t fakeTicker) C() <-chan time.Time   { return t.t.C() }
func (t fakeTicker) Stop()                 { t.t.Stop() }
func (t fakeTicker) Reset(d time.Duration) { t.t.Reset(d) }
