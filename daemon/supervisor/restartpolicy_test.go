package supervisor

import (
	"testing"
	"time"

	"github.com/gtrain/gtrain/jobspec"
)

func TestRestartBackoff(t *testing.T) {
	want := []time.Duration{200 * time.Millisecond, 400 * time.Millisecond, 800 * time.Millisecond,
		1600 * time.Millisecond, 3200 * time.Millisecond, 5 * time.Second, 5 * time.Second}
	for i, w := range want {
		if got := restartBackoff(i + 1); got != w {
			t.Errorf("restartBackoff(%d) = %s, want %s", i+1, got, w)
		}
	}
	if got := restartBackoff(1000); got != 5*time.Second {
		t.Errorf("restartBackoff(1000) = %s, want the 5s cap", got)
	}
}

func TestCrashBudget(t *testing.T) {
	t0 := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	b := CrashBudget{Limit: 2, Window: time.Minute}
	steps := []struct {
		at       time.Duration
		inWindow int
		exceeded bool
	}{
		{0, 1, false},
		{10 * time.Second, 2, false},
		{65 * time.Second, 2, false}, // the first crash left the window
		{68 * time.Second, 3, true},  // three within a minute: more than 2
	}
	for _, s := range steps {
		n, exceeded := b.crash(t0.Add(s.at))
		if n != s.inWindow || exceeded != s.exceeded {
			t.Errorf("crash at +%s = %d, %v; want %d, %v", s.at, n, exceeded, s.inWindow, s.exceeded)
		}
	}
}

func TestCrashBudgetUsedAndSpec(t *testing.T) {
	now := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	b := BudgetOf(jobspec.RestartsSpec{Limit: 3, Window: "1m"})
	if b.Limit != 3 || b.Window != time.Minute {
		t.Fatalf("BudgetOf = %+v, want 3 per minute", b)
	}
	crashes := []time.Time{now.Add(-90 * time.Second), now.Add(-59 * time.Second), now.Add(-time.Second)}
	if got := b.UsedAt(crashes, now); got != 2 {
		t.Errorf("UsedAt = %d, want 2 (one crash is older than the window)", got)
	}
	if old := BudgetOf(jobspec.RestartsSpec{}); old.Limit != 5 || old.Window != time.Minute {
		t.Errorf("BudgetOf a record without restarts = %+v, want the default 5 per minute", old)
	}
}
