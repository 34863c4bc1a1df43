package daemon

import (
	"log/slog"
	"sync"
)

// members remembers which gossip peers were declared dead (or left), so
// the node list can show them "down" seconds before their etcd lease ends.
type members struct {
	log  *slog.Logger
	mu   sync.Mutex
	down map[string]bool
}

func newMembers(log *slog.Logger) *members { return &members{log: log, down: map[string]bool{}} }

// change is the gossip callback.
func (m *members) change(name string, alive bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if alive {
		if m.down[name] {
			m.log.Info("node is back", "node", name)
		}
		delete(m.down, name)
		return
	}
	m.log.Warn("node is down (gossip)", "node", name)
	m.down[name] = true
}

func (m *members) isDown(name string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.down[name]
}
