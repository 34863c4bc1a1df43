package retry

import (
	"context"
	"errors"
	"math/rand/v2"
	"time"

	"github.com/gtrain/gtrain/internal/clock"
)

// Policy paces the attempts. The zero Policy retries at once, forever.
type Policy struct {
	Initial    time.Duration // pause after the first failure
	Multiplier float64       // growth of the pause per failure; below 1 keeps it constant
	Max        time.Duration // cap on one pause; 0 for none
	// Jitter in [0,1] draws each pause uniformly from [p*(1-Jitter), p], so
	// that many clients failing together do not retry together.
	Jitter      float64
	MaxElapsed  time.Duration // no attempt starts later than this after the first; 0 for no limit
	MaxAttempts int           // 0 for no limit
}

// Pause is the pause after failure n (1-based), before jitter.
func (p Policy) Pause(n int) time.Duration {
	limit := float64(longest)
	if p.Max > 0 {
		limit = float64(p.Max)
	}
	d := float64(p.Initial)
	if p.Multiplier > 1 {
		for i := 1; i < n && d < limit; i++ {
			d *= p.Multiplier
		}
	}
	return time.Duration(min(d, limit))
}

// longest caps an uncapped pause well inside time.Duration's range.
const longest = 1 << 62

// withRandom replaces the uniform [0,1) source of the jitter.
func withRandom(f func() float64) Option {
	return func(r *run) { r.random = f }
}

// jittered draws the pause after failure n; u is uniform in [0,1).
func (p Policy) jittered(n int, u float64) time.Duration {
	d := p.Pause(n)
	return d - time.Duration(min(max(p.Jitter, 0), 1)*u*float64(d))
}

type permanentError struct{ err error }

func (e permanentError) Error() string { return e.err.Error() }
func (e permanentError) Unwrap() error { return e.err }

// Permanent marks err as not worth another attempt: Do returns err at once.
// Permanent(nil) is nil.
func Permanent(err error) error {
	if err == nil {
		return nil
	}
	return permanentError{err}
}

// Do calls op until it returns nil or a Permanent error, the policy gives up
// (it then returns op's last error) or ctx ends during a pause (it then
// returns ctx.Err()). op runs at least once.
func Do(ctx context.Context, p Policy, op func() error, opts ...Option) error {
	r := run{sleep: Sleep, now: time.Now, random: rand.Float64}
	for _, o := range opts {
		o(&r)
	}
	start := r.now()
	for attempt := 1; ; attempt++ {
		err := op()
		var perm permanentError
		switch {
		case err == nil:
			return nil
		case errors.As(err, &perm):
			return perm.err
		case p.MaxAttempts > 0 && attempt >= p.MaxAttempts:
			return err
		}
		pause := p.jittered(attempt, r.random())
		if p.MaxElapsed > 0 && r.now().Add(pause).Sub(start) > p.MaxElapsed {
			return err
		}
		if r.notify != nil {
			r.notify(attempt, err, pause)
		}
		if serr := r.sleep(ctx, pause); serr != nil {
			return serr
		}
	}
}

// run is one Do's hooks.
type run struct {
	notify func(attempt int, err error, pause time.Duration)
	sleep  func(ctx context.Context, d time.Duration) error
	now    func() time.Time
	random func() float64
}

// Option changes how one Do runs.
type Option func(*run)

// OnRetry has f called before each pause with the number of the attempt
// that failed, its error and the pause; e.g. to log.
func OnRetry(f func(attempt int, err error, pause time.Duration)) Option {
	return func(r *run) { r.notify = f }
}

// WithSleep replaces the pause, which must return ctx.Err() if ctx ends
// first; for callers with an injected wait and for tests.
func WithSleep(f func(ctx context.Context, d time.Duration) error) Option {
	return func(r *run) { r.sleep = f }
}

// WithClock replaces time.Now in the MaxElapsed check.
func WithClock(now func() time.Time) Option {
	return func(r *run) { r.now = now }
}

// OnClock runs the pauses and the MaxElapsed check by clock c: the roles'
// injected clock.
func OnClock(c clock.Clock) Option {
	return func(r *run) { r.sleep, r.now = c.Sleep, c.Now }
}

// Sleep waits d, or returns ctx.Err() as soon as ctx ends.
func Sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
