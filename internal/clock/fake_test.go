package clock

import (
	"context"
	"errors"
	"testing"
	"time"
)

var epoch = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// Advance moves both times; Jump only the wall time, and fires nothing.
func TestFakeAdvanceAndJump(t *testing.T) {
	f := NewFake(epoch)
	timer := f.NewTimer(time.Second)
	f.Jump(time.Hour)
	if f.Monotonic() != 0 || !f.Now().Equal(epoch.Add(time.Hour)) {
		t.Fatalf("after Jump: monotonic %s, now %s", f.Monotonic(), f.Now())
	}
	select {
	case <-timer.C():
		t.Fatal("a Jump of the wall time fired a timer")
	default:
	}
	f.Advance(2 * time.Second)
	if f.Monotonic() != 2*time.Second || f.Since(epoch) != time.Hour+2*time.Second {
		t.Fatalf("after Advance: monotonic %s, since start %s", f.Monotonic(), f.Since(epoch))
	}
	// The timer fires as the clock reads its time, not the end of the Advance.
	if got := <-timer.C(); !got.Equal(epoch.Add(time.Hour + time.Second)) {
		t.Errorf("timer sent %s, want its due time %s", got, epoch.Add(time.Hour+time.Second))
	}
}

// A timer fires once the clock reaches its time, not before; a stopped one
// never; a reset one at its new time.
func TestFakeTimer(t *testing.T) {
	f := NewFake(epoch)
	fired := func(tm Timer) bool {
		select {
		case <-tm.C():
			return true
		default:
			return false
		}
	}
	a, b, c := f.NewTimer(time.Second), f.NewTimer(time.Second), f.NewTimer(time.Second)
	if !b.Stop() || b.Stop() {
		t.Error("Stop: want true for a pending timer, then false")
	}
	c.Reset(3 * time.Second)
	f.Advance(time.Second - time.Nanosecond)
	if fired(a) {
		t.Error("timer fired before its time")
	}
	f.Advance(time.Nanosecond)
	if !fired(a) || fired(b) || fired(c) {
		t.Error("at 1s: want only the first timer fired")
	}
	if a.Stop() {
		t.Error("Stop of a fired timer: want false")
	}
	f.Advance(2 * time.Second)
	if !fired(c) {
		t.Error("reset timer did not fire at its new time")
	}
	if f.Timers() != 0 {
		t.Errorf("%d timers pending, want none", f.Timers())
	}
	if d := f.NewTimer(0); !fired(d) {
		t.Error("a timer of 0 did not fire at once")
	}
}

// Timers due in one Advance fire earliest first, whatever their creation
// order; AfterFunc runs its function.
func TestFakeOrderAndAfterFunc(t *testing.T) {
	f := NewFake(epoch)
	order := make(chan int, 2)
	f.AfterFunc(2*time.Second, func() { order <- 2 })
	f.AfterFunc(time.Second, func() { order <- 1 })
	late := f.AfterFunc(5*time.Second, func() { order <- 5 })
	f.Advance(3 * time.Second)
	got := map[int]bool{<-order: true, <-order: true}
	if !got[1] || !got[2] || !late.Stop() {
		t.Errorf("after 3s: fired %v; want 1 and 2, 5 still pending", got)
	}
	// AfterFunc's functions run in goroutines, so only the timer order,
	// which Advance sets, is checked: by the time each fired.
	a, b := f.NewTimer(2*time.Second), f.NewTimer(time.Second)
	f.Advance(2 * time.Second)
	if ta, tb := <-a.C(), <-b.C(); !tb.Before(ta) {
		t.Errorf("timer of 1s fired at %s, not before the one of 2s at %s", tb, ta)
	}
}

// A ticker ticks every period and, like time.Ticker, drops the ticks a
// reader misses; Reset changes its period.
func TestFakeTicker(t *testing.T) {
	f := NewFake(epoch)
	tk := f.NewTicker(time.Second)
	f.Advance(time.Second)
	if got := <-tk.C(); !got.Equal(epoch.Add(time.Second)) {
		t.Errorf("first tick at %s, want %s", got, epoch.Add(time.Second))
	}
	f.Advance(3 * time.Second) // three ticks, one kept
	<-tk.C()
	select {
	case <-tk.C():
		t.Error("missed ticks were kept")
	default:
	}
	tk.Reset(10 * time.Second)
	f.Advance(9 * time.Second)
	select {
	case <-tk.C():
		t.Error("ticked before the reset period")
	default:
	}
	f.Advance(time.Second)
	<-tk.C()
	tk.Stop()
	f.Advance(time.Minute)
	if f.Timers() != 0 {
		t.Error("a stopped ticker is still pending")
	}
}

// Sleep returns once the clock passed its time, or with ctx's error.
// WaitForTimers tells the test when the sleeper is waiting.
func TestFakeSleepAndWaitForTimers(t *testing.T) {
	f := NewFake(epoch)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- f.Sleep(ctx, time.Minute) }()
	if err := f.WaitForTimers(ctx, 1); err != nil {
		t.Fatal(err)
	}
	f.Advance(time.Minute)
	if err := <-done; err != nil {
		t.Fatalf("Sleep: %v", err)
	}
	cctx, ccancel := context.WithCancel(ctx)
	go func() { done <- f.Sleep(cctx, time.Minute) }()
	if err := f.WaitForTimers(ctx, 1); err != nil {
		t.Fatal(err)
	}
	ccancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("Sleep after cancel: %v, want context.Canceled", err)
	}
	if f.Timers() != 0 {
		t.Error("a cancelled Sleep left its timer")
	}
}

// WithTimeout on a fake clock ends with DeadlineExceeded when the clock
// passes it, also in the contexts derived from it; cancelled first, with
// Canceled; and with its parent.
func TestWithTimeoutOnAFakeClock(t *testing.T) {
	f := NewFake(epoch)
	ctx, cancel := WithTimeout(context.Background(), f, time.Second)
	defer cancel()
	child, childCancel := context.WithCancel(ctx)
	defer childCancel()
	f.Advance(time.Second - time.Nanosecond)
	if ctx.Err() != nil {
		t.Fatal("ended before its timeout")
	}
	f.Advance(time.Nanosecond)
	<-child.Done()
	if ctx.Err() != context.DeadlineExceeded || child.Err() != context.DeadlineExceeded {
		t.Errorf("after the timeout: %v, child %v; want DeadlineExceeded", ctx.Err(), child.Err())
	}
	ctx2, cancel2 := WithTimeout(context.Background(), f, time.Second)
	cancel2()
	if ctx2.Err() != context.Canceled || f.Timers() != 0 {
		t.Errorf("cancelled: %v, %d timers left; want Canceled, none", ctx2.Err(), f.Timers())
	}
	parent, cancelParent := context.WithCancel(context.Background())
	ctx3, cancel3 := WithTimeout(parent, f, time.Second)
	defer cancel3()
	cancelParent()
	<-ctx3.Done()
	if ctx3.Err() != context.Canceled {
		t.Errorf("parent cancelled: %v, want Canceled", ctx3.Err())
	}
}
