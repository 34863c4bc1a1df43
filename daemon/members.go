package daemon

import (
	"log/slog"
	"sync"
	"time"

	"github.com/gtrain/gtrain/internal/clock"
)

// members remembers which gossip peers were declared dead (or left), so
// that the node list shows them down, and the scheduler moves their roles,
// as soon as gossip knows (often before their etcd lease ends).
//
// Gossip only hastens the verdict; the node's etcd lease is the authority.
// A gossip verdict counts for trust after it is given: by then the lease
// of a dead node has ended too, and a node that gossip still misses but
// whose agent holds its lease (a restarted agent that peers have not
// re-admitted yet, a blocked gossip port) is alive.
type members struct {
	log     *slog.Logger
	trust   time.Duration
	clock   clock.Clock
	mu      sync.Mutex
	down    map[string]time.Time // node -> when gossip declared it dead
	changed chan struct{}        // poked when a node goes down or comes back
}

// newMembers trusts a gossip verdict for twice the etcd session TTL.
func newMembers(log *slog.Logger, sessionTTL int) *members {
	return &members{
		log: log, trust: 2 * time.Duration(sessionTTL) * time.Second, clock: clock.System{},
		down: map[string]time.Time{}, changed: make(chan struct{}, 1),
	}
}

// Changes receives after a node went down or came back (for the scheduler,
// the one reader).
func (m *members) Changes() <-chan struct{} { return m.changed }

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
		if _, ok := m.down[name]; ok {
			m.log.Info("node is back", "node", name)
			m.poke()
		}
		delete(m.down, name)
		return
	}
	m.log.Warn("node is down (gossip)", "node", name)
	m.down[name] = m.clock.Now()
	m.poke()
}

// IsDown reports whether gossip declared the node dead, less than trust ago.
func (m *members) IsDown(name string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	at, ok := m.down[name]
	return ok && m.clock.Now().Sub(at) < m.trust
}
