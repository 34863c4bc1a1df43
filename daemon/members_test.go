package daemon

import (
	"testing"
	"time"

	"github.com/gtrain/gtrain/internal/clock"
)

func TestMembers(t *testing.T) {
	m := newMembers(testLog(t), 5)
	fake := clock.NewFake(time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC))
	m.clock = fake
	m.change("n2", true)
	if m.IsDown("n2") {
		t.Error("a joined node is down")
	}
	m.change("n2", false)
	if !m.IsDown("n2") || m.IsDown("n1") {
		t.Error("a dead node is not down, or an unknown one is")
	}
	fake.Advance(9 * time.Second)
	if !m.IsDown("n2") {
		t.Error("a gossip verdict is not trusted for twice the session TTL")
	}
	fake.Advance(time.Second)
	if m.IsDown("n2") {
		t.Error("a gossip verdict still counts after twice the session TTL: the lease decides then")
	}
	m.change("n2", false)
	m.change("n2", true)
	if m.IsDown("n2") {
		t.Error("a node that came back is still down")
	}
	select {
	case <-m.Changes():
	default:
		t.Error("no change was signalled")
	}
}
