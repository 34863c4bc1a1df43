package daemon

import (
	"strings"
	"testing"
	"time"
)

func TestParseMemTotal(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int64
	}{
		{"MemTotal:       16318412 kB\nMemFree: 1 kB\n", 16318412 * 1024},
		{"MemFree: 1 kB\nMemTotal: 2048 kB\n", 2048 * 1024},
		{"MemTotal: 100\n", 100},
		{"MemTotal: lots kB\n", 0},
		{"MemFree: 1 kB\n", 0},
		{"", 0},
	} {
		if got := parseMemTotal(strings.NewReader(tc.in)); got != tc.want {
			t.Errorf("parseMemTotal(%q) = %d, want %d", tc.in, got, tc.want)
		}
	}
}

func TestMembers(t *testing.T) {
	m := newMembers(testLog(t), 5)
	now := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	m.now = func() time.Time { return now }
	m.change("n2", true)
	if m.isDown("n2") {
		t.Error("a joined node is down")
	}
	m.change("n2", false)
	if !m.isDown("n2") || m.isDown("n1") {
		t.Error("a dead node is not down, or an unknown one is")
	}
	now = now.Add(9 * time.Second)
	if !m.isDown("n2") {
		t.Error("a gossip verdict is not trusted for twice the session TTL")
	}
	now = now.Add(time.Second)
	if m.isDown("n2") {
		t.Error("a gossip verdict still counts after twice the session TTL: the lease decides then")
	}
	m.change("n2", false)
	m.change("n2", true)
	if m.isDown("n2") {
		t.Error("a node that came back is still down")
	}
	select {
	case <-m.changes():
	default:
		t.Error("no change was signalled")
	}
}
