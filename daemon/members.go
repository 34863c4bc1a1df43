package daemon

import (
	"log/slog"
	"sync"
)

// members remembers which gossip peers were declared dead (or left), so
// that the node list shows them down, and the scheduler moves their roles,
// as soon as gossip knows (often before their etcd lease ends).
type members struct {
	log     *slog.Logger
	mu      sync.Mutex
	down    map[string]bool
	changed chan struct{} // poked when a node goes down or comes back
}

func newMembers(log *slog.Logger) *members {
	return &members{log: log, down: map[string]bool{}, changed: make(chan struct{}, 1)}
}

// changes receives after a node went down or came back (for the scheduler,
// the one reader).
func (m *members) changes() <-chan struct{} { return m.changed }

func (m *members) poke() {
	select {
	case m.changed <- struct{}{}:
	default:
	}
}

// change is the gossip callback.
func (m *members) change(name string, alive bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if alive {
		if m.down[name] {
			m.log.Info("node is back", "node", name)
			m.poke()
		}
		delete(m.down, name)
		return
	}
	m.log.Warn("node is down (gossip)", "node", name)
	m.down[name] = true
	m.poke()
}

func (m *members) isDown(name string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.down[name]
}
