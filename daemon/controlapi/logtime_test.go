package controlapi

import (
	"bytes"
	"log/slog"
	"testing"
	"time"
)

func TestLineTime(t *testing.T) {
	at := time.Date(2026, 3, 4, 5, 6, 7, 891_000_000, time.FixedZone("CET", 3600))
	// A line as cmd/gtraind's role logger writes it.
	var role bytes.Buffer
	h := slog.NewTextHandler(&role, nil)
	r := slog.NewRecord(at, slog.LevelInfo, "step done", 0)
	r.AddAttrs(slog.Int("step", 3))
	if err := h.Handle(t.Context(), r); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		line string
		want time.Time
		ok   bool
	}{
		{role.String(), at, true},
		{"=== gtraind: starting trainer-0 (attempt 2) at 2026-03-04T04:06:07Z ===\n", time.Date(2026, 3, 4, 4, 6, 7, 0, time.UTC), true},
		{"=== gtraind: cannot start trainer-0: no such file ===\n", time.Time{}, false},
		{"time=yesterday level=INFO\n", time.Time{}, false},
		{"goroutine 1 [running]:\n", time.Time{}, false},
		{"\n", time.Time{}, false},
	} {
		got, ok := LineTime([]byte(tc.line))
		if ok != tc.ok || !got.Equal(tc.want) {
			t.Errorf("LineTime(%q) = %v, %v; want %v, %v", tc.line, got, ok, tc.want, tc.ok)
		}
	}
}
