package retry

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"
)

func TestPause(t *testing.T) {
	ms := time.Millisecond
	for _, tc := range []struct {
		name string
		p    Policy
		want []time.Duration // pauses after failures 1, 2, ...
	}{
		{"doubling to a cap", Policy{Initial: 200 * ms, Multiplier: 2, Max: time.Second}, []time.Duration{200 * ms, 400 * ms, 800 * ms, time.Second, time.Second}},
		{"constant", Policy{Initial: time.Second}, []time.Duration{time.Second, time.Second, time.Second}},
		{"multiplier below 1 is constant", Policy{Initial: time.Second, Multiplier: 0.5}, []time.Duration{time.Second, time.Second}},
		{"initial above the cap", Policy{Initial: 3 * time.Second, Multiplier: 2, Max: time.Second}, []time.Duration{time.Second, time.Second}},
		{"zero", Policy{}, []time.Duration{0, 0}},
		{"one and a half", Policy{Initial: 100 * ms, Multiplier: 1.5}, []time.Duration{100 * ms, 150 * ms, 225 * ms}},
	} {
		var got []time.Duration
		for n := 1; n <= len(tc.want); n++ {
			got = append(got, tc.p.Pause(n))
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s: pauses %v, want %v", tc.name, got, tc.want)
		}
	}
	if got := (Policy{Initial: time.Second, Multiplier: 10}).Pause(1 << 30); got != longest {
		t.Errorf("uncapped pause after many failures = %v, want the %v ceiling", got, time.Duration(longest))
	}
}

func TestJitterStaysWithinItsFraction(t *testing.T) {
	p := Policy{Initial: time.Second}
	for _, tc := range []struct {
		jitter, u float64
		want      time.Duration
	}{
		{0, 0.99, time.Second},
		{0.5, 0, time.Second},
		{0.5, 0.5, 750 * time.Millisecond},
		{0.5, 0.999999, 500*time.Millisecond + 500*time.Nanosecond},
		{2, 0.5, 500 * time.Millisecond}, // jitter above 1 counts as 1
		{-1, 0.5, time.Second},           // and below 0 as 0
	} {
		p.Jitter = tc.jitter
		if got := p.jittered(1, tc.u); got != tc.want {
			t.Errorf("jitter %v, u %v: pause %v, want %v", tc.jitter, tc.u, got, tc.want)
		}
	}
}

var (
	errFlaky = errors.New("flaky")
	errFatal = errors.New("fatal")
)

// fakeTime is a clock that only the fake sleep advances.
type fakeTime struct {
	now    time.Time
	pauses []time.Duration
}

func (f *fakeTime) options() []Option {
	return []Option{
		WithClock(func() time.Time { return f.now }),
		WithSleep(func(ctx context.Context, d time.Duration) error {
			f.pauses = append(f.pauses, d)
			f.now = f.now.Add(d)
			return ctx.Err()
		}),
		withRandom(func() float64 { return 0 }),
	}
}

func TestDo(t *testing.T) {
	s := time.Second
	for _, tc := range []struct {
		name       string
		p          Policy
		results    []error // op's results in turn; the last one repeats
		wantErr    error
		wantPauses []time.Duration
	}{
		{"first try", Policy{Initial: s}, []error{nil}, nil, nil},
		{"succeeds on the third", Policy{Initial: s, Multiplier: 2}, []error{errFlaky, errFlaky, nil}, nil, []time.Duration{s, 2 * s}},
		{"permanent stops at once", Policy{Initial: s}, []error{errFlaky, Permanent(errFatal)}, errFatal, []time.Duration{s}},
		{"max attempts", Policy{Initial: s, MaxAttempts: 3}, []error{errFlaky}, errFlaky, []time.Duration{s, s}},
		{"max elapsed", Policy{Initial: s, Multiplier: 2, MaxElapsed: 10 * s}, []error{errFlaky}, errFlaky, []time.Duration{s, 2 * s, 4 * s}},
		{"pause ending at max elapsed", Policy{Initial: 5 * s, MaxElapsed: 10 * s}, []error{errFlaky}, errFlaky, []time.Duration{5 * s, 5 * s}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clock := &fakeTime{now: time.Unix(1000, 0)}
			calls := 0
			err := Do(context.Background(), tc.p, func() error {
				calls++
				return tc.results[min(calls, len(tc.results))-1]
			}, clock.options()...)
			if !errors.Is(err, tc.wantErr) || (tc.wantErr == nil) != (err == nil) {
				t.Fatalf("err = %v, want %v", err, tc.wantErr)
			}
			if _, isPerm := err.(permanentError); isPerm {
				t.Fatalf("err %v is still marked permanent", err)
			}
			if !slices.Equal(clock.pauses, tc.wantPauses) || calls != len(tc.wantPauses)+1 {
				t.Fatalf("%d calls, pauses %v; want %d calls, pauses %v", calls, clock.pauses, len(tc.wantPauses)+1, tc.wantPauses)
			}
		})
	}
}

func TestDoNotifiesBeforeEachPause(t *testing.T) {
	type note struct {
		attempt int
		err     error
		pause   time.Duration
	}
	var notes []note
	clock := &fakeTime{now: time.Unix(0, 0)}
	opts := append(clock.options(), OnRetry(func(attempt int, err error, pause time.Duration) {
		notes = append(notes, note{attempt, err, pause})
	}))
	err := Do(context.Background(), Policy{Initial: time.Second, Multiplier: 3, MaxAttempts: 3}, func() error { return errFlaky }, opts...)
	want := []note{{1, errFlaky, time.Second}, {2, errFlaky, 3 * time.Second}}
	if !errors.Is(err, errFlaky) || !slices.Equal(notes, want) {
		t.Fatalf("err %v, notes %v; want %v after the notes %v", err, notes, errFlaky, want)
	}
}

func TestDoStopsWhenTheContextEnds(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	calls := 0
	err := Do(ctx, Policy{Initial: time.Hour}, func() error {
		calls++
		cancel()
		return errFlaky
	})
	if !errors.Is(err, context.Canceled) || calls != 1 {
		t.Fatalf("err %v after %d calls, want context.Canceled after 1", err, calls)
	}
}

func TestPermanentNil(t *testing.T) {
	if Permanent(nil) != nil {
		t.Fatal("Permanent(nil) is not nil")
	}
}

func TestSleep(t *testing.T) {
	if err := Sleep(context.Background(), time.Millisecond); err != nil {
		t.Fatalf("Sleep of 1ms = %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := Sleep(ctx, time.Hour); !errors.Is(err, context.Canceled) {
		t.Fatalf("Sleep with an ended context = %v, want context.Canceled", err)
	}
}
