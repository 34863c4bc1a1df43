package master

import (
	"context"
	"sync"
	"time"

	"github.com/gtrain/gtrain/api"
	"github.com/gtrain/gtrain/coord"
)

// Meta is the master's small, whole-job state; it is written with every
// saved change, beside the changed tasks, in the same commit (sync step
// commits are saved in the background: see Effects.Deferred).
type Meta struct {
	Tasks          int     `json:"tasks"`           // task count, to refuse a state cut from other data
	Pass           int     `json:"pass"`            // passes finished == the current pass index
	Step           int64   `json:"step"`            // sync: global steps committed; async: minibatches reported
	PassStartStep  int64   `json:"pass_start_step"` // sync: first global step of the current pass
	SamplesApplied []int64 `json:"samples_applied"` // per finished pass
	PassSamples    int64   `json:"pass_samples"`    // in the current pass so far
	PassLossSum    float64 `json:"pass_loss_sum"`
	// PassLossSkipped is the records of PassSamples whose loss is not in
	// PassLossSum: steps a new master committed from the plan (Core.CatchUp).
	PassLossSkipped int64       `json:"pass_loss_skipped,omitempty"`
	Metrics         api.Metrics `json:"metrics"`
	Done            bool        `json:"done"`
	Epoch           int64       `json:"epoch"` // sync: bumped by every rollback; older reports are void
	Slot            int         `json:"slot"`  // which copy of the task states is current (see coord.TaskSlotPrefix)
	// PassStart is when the current pass started (the core's time), for
	// the history's seconds; LastPass is the newest finished pass, which
	// a Store writes into the job's history in the commit of this Meta.
	PassStart time.Time        `json:"pass_start,omitzero"`
	LastPass  *api.PassHistory `json:"last_pass,omitempty"`
}

// Store persists the master's state. Save must be atomic per call or, where
// the backend bounds a commit's size, write Meta last so that a reader never
// sees a Meta ahead of its tasks.
type Store interface {
	Load(ctx context.Context) (meta *Meta, statuses []TaskStatus, err error) // meta nil: nothing stored yet
	// progress nil: the public progress record is not rewritten this time.
	Save(ctx context.Context, meta Meta, changed []TaskStatus, progress *coord.ProgressRecord) error
}

// MemStore is an in-memory Store for unit tests.
type MemStore struct {
	mu       sync.Mutex
	meta     *Meta
	statuses map[int]TaskStatus
	Saves    int
	Progress *coord.ProgressRecord // the last one saved
	Fail     error                 // returned by Save when set
}

// Load returns what was saved.
func (m *MemStore) Load(ctx context.Context) (*Meta, []TaskStatus, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.meta == nil {
		return nil, nil, nil
	}
	meta := *m.meta
	meta.SamplesApplied = append([]int64(nil), m.meta.SamplesApplied...)
	out := make([]TaskStatus, 0, len(m.statuses))
	for i := 0; i < len(m.statuses); i++ {
		out = append(out, m.statuses[i])
	}
	return &meta, out, nil
}

// Save stores meta and the changed statuses.
func (m *MemStore) Save(ctx context.Context, meta Meta, changed []TaskStatus, progress *coord.ProgressRecord) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.Fail != nil {
		return m.Fail
	}
	if m.statuses == nil {
		m.statuses = map[int]TaskStatus{}
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
