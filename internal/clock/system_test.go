package clock

import (
	"context"
	"testing"
	"time"
)

// The System clock is package time's: its timers fire, its monotonic time
// moves, and WithTimeout is context.WithTimeout.
func TestSystem(t *testing.T) {
	var c Clock = Or(nil)
	start, mono := c.Now(), c.Monotonic()
	<-c.After(time.Millisecond)
	<-c.NewTimer(time.Millisecond).C()
	if err := c.Sleep(context.Background(), time.Millisecond); err != nil {
		t.Fatal(err)
	}
	tk := c.NewTicker(time.Millisecond)
	<-tk.C()
	tk.Stop()
	fired := make(chan struct{})
	c.AfterFunc(time.Millisecond, func() { close(fired) })
	<-fired
	if c.Since(start) < 4*time.Millisecond || c.Monotonic()-mono < 4*time.Millisecond {
		t.Errorf("since %s, monotonic moved %s: want >= 4ms", c.Since(start), c.Monotonic()-mono)
	}
	ctx, cancel := WithTimeout(context.Background(), c, time.Millisecond)
	defer cancel()
	if _, ok := ctx.Deadline(); !ok {
		t.Error("WithTimeout on the System clock has no deadline")
	}
	<-ctx.Done()
	if ctx.Err() != context.DeadlineExceeded {
		t.Errorf("Err %v, want DeadlineExceeded", ctx.Err())
	}
}
