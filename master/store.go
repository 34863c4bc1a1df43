package master

import (
	"context"
	"sync"

	"github.com/gtrain/gtrain/coord/schema"
	"github.com/gtrain/gtrain/master/core"
)

// Store persists the master's state. Save must be atomic per call or, where
// the backend bounds a commit's size, write Meta last so that a reader never
// sees a Meta ahead of its tasks.
type Store interface {
	Load(ctx context.Context) (meta *core.Meta, statuses []core.TaskStatus, err error) // meta nil: nothing stored yet
	// progress nil: the public progress record is not rewritten this time.
	Save(ctx context.Context, meta core.Meta, changed []core.TaskStatus, progress *schema.ProgressRecord) error
}

// MemStore is an in-memory Store for unit tests.
type MemStore struct {
	mu       sync.Mutex
	meta     *core.Meta
	statuses map[int]core.TaskStatus
	Saves    int
	Progress *schema.ProgressRecord // the last one saved
	Fail     error                  // returned by Save when set
}

// Load returns what was saved.
func (m *MemStore) Load(ctx context.Context) (*core.Meta, []core.TaskStatus, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.meta == nil {
		return nil, nil, nil
	}
	meta := *m.meta
	meta.SamplesApplied = append([]int64(nil), m.meta.SamplesApplied...)
	out := make([]core.TaskStatus, 0, len(m.statuses))
	for i := 0; i < len(m.statuses); i++ {
		out = append(out, m.statuses[i])
	}
	return &meta, out, nil
}

// Save stores meta and the changed statuses.
func (m *MemStore) Save(ctx context.Context, meta core.Meta, changed []core.TaskStatus, progress *schema.ProgressRecord) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.Fail != nil {
		return m.Fail
	}
	if m.statuses == nil {
		m.statuses = map[int]core.TaskStatus{}
	}
	for _, s := range changed {
		m.statuses[s.ID] = s
	}
	meta.SamplesApplied = append([]int64(nil), meta.SamplesApplied...)
	m.meta = &meta
	if progress != nil {
		m.Progress = progress
	}
	m.Saves++
	return nil
}
