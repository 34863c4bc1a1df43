package roleruntime

import (
	"io"
	"log/slog"
	"runtime"
	"testing"
)

func TestLimitProcs(t *testing.T) {
	t.Setenv("GOMAXPROCS", "")
	before := runtime.GOMAXPROCS(0)
	defer runtime.GOMAXPROCS(before)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	cases := []struct {
		cpu  float64
		want int
	}{
		{0.1, 1},
		{1, 1},
		{1.5, min(2, runtime.NumCPU())},
		{1000, runtime.NumCPU()},
	}
	for _, c := range cases {
		if got := LimitProcs(c.cpu, log); got != c.want || runtime.GOMAXPROCS(0) != c.want {
			t.Errorf("cpu %v: got %d (GOMAXPROCS %d), want %d", c.cpu, got, runtime.GOMAXPROCS(0), c.want)
		}
	}
	runtime.GOMAXPROCS(before)
	if got := LimitProcs(0, log); got != before {
		t.Errorf("cpu 0 (not stated) changed GOMAXPROCS to %d, want %d", got, before)
	}
	t.Setenv("GOMAXPROCS", "7")
	if got := LimitProcs(0.5, log); got != before {
		t.Errorf("GOMAXPROCS in the environment was overridden: %d, want %d", got, before)
	}
}

func TestRaise(t *testing.T) {
	before := runtime.GOMAXPROCS(1)
	defer runtime.GOMAXPROCS(before)
	restore := Raise(2)
	if got := runtime.GOMAXPROCS(0); got != 2 {
		t.Errorf("raised to %d, want 2", got)
	}
	restore()
	if got := runtime.GOMAXPROCS(0); got != 1 {
		t.Errorf("restored to %d, want 1", got)
	}
	runtime.GOMAXPROCS(3)
	Raise(2)() // lower than in force: nothing
	if got := runtime.GOMAXPROCS(0); got != 3 {
		t.Errorf("a lower Raise changed GOMAXPROCS to %d, want 3", got)
	}
}

// TestLimitComputeProcs: the compute threads are the CPUs asked for, and
// the runtime gets one P more for the network; nothing asked, or
// GOMAXPROCS in the environment, leaves the runtime alone (threads 0:
// GOMAXPROCS).
func TestLimitComputeProcs(t *testing.T) {
	t.Setenv("GOMAXPROCS", "")
	before := runtime.GOMAXPROCS(0)
	defer runtime.GOMAXPROCS(before)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	for _, c := range []struct {
		cpu  float64
		want int
	}{{0.5, 1}, {1, 1}, {1.5, min(2, runtime.NumCPU())}, {1000, runtime.NumCPU()}} {
		if got := LimitComputeProcs(c.cpu, 0, log); got != c.want || runtime.GOMAXPROCS(0) != c.want+1 {
			t.Errorf("cpu %v: %d threads (GOMAXPROCS %d), want %d (GOMAXPROCS %d)", c.cpu, got, runtime.GOMAXPROCS(0), c.want, c.want+1)
		}
	}
	// A trainer given CPUs of its own starts on the shared ones: those it
	// was given count as well (here, more than this machine has).
	n := runtime.NumCPU() + 2
	if got := LimitComputeProcs(float64(n), n, log); got != n {
		t.Errorf("cpu %d with %d CPUs of its own: %d threads", n, n, got)
	}
	runtime.GOMAXPROCS(before)
	if got := LimitComputeProcs(0, 0, log); got != 0 || runtime.GOMAXPROCS(0) != before {
		t.Errorf("cpu 0: %d threads, GOMAXPROCS %d; want 0 and %d untouched", got, runtime.GOMAXPROCS(0), before)
	}
	t.Setenv("GOMAXPROCS", "7")
	if got := LimitComputeProcs(2, 0, log); got != 0 || runtime.GOMAXPROCS(0) != before {
		t.Errorf("GOMAXPROCS in the environment: %d threads, GOMAXPROCS %d; want 0 and %d untouched", got, runtime.GOMAXPROCS(0), before)
	}
}
