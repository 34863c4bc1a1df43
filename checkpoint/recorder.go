package checkpoint

import (
	"context"
	"fmt"
	"sync"
)

// Recorder durably names the current checkpoint of each pserver index.
// Versions are opaque, strictly increasing per store, and 0 means "absent".
type Recorder interface {
	// Load returns the record of index; found is false (and version 0) when there is none.
	Load(ctx context.Context, index int) (rec Record, version int64, found bool, err error)
	// CompareAndSwap stores rec if the stored version still equals prevVersion
	// (0 = absent); ErrConflict otherwise.
	CompareAndSwap(ctx context.Context, rec Record, prevVersion int64) (newVersion int64, err error)
}

// MemRecorder is an in-memory Recorder for tests and single-process use.
// It is safe for concurrent use; the zero value is ready.
type MemRecorder struct {
	mu       sync.Mutex
	revision int64
	records  map[int]memEntry
}

type memEntry struct {
	rec     Record
	version int64
}

// NewMemRecorder returns an empty MemRecorder.
func NewMemRecorder() *MemRecorder {
	return &MemRecorder{}
}

// Load implements Recorder.
func (m *MemRecorder) Load(ctx context.Context, index int) (Record, int64, bool, error) {
	if err := ctx.Err(); err != nil {
		return Record{}, 0, false, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	e, ok := m.records[index]
	return e.rec, e.version, ok, nil
}

// CompareAndSwap implements Recorder.
func (m *MemRecorder) CompareAndSwap(ctx context.Context, rec Record, prevVersion int64) (int64, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if cur := m.records[rec.Index].version; cur != prevVersion {
		return 0, fmt.Errorf("%w: record of pserver %d is at version %d, writer expected %d", ErrConflict, rec.Index, cur, prevVersion)
	}
	if m.records == nil {
		m.records = make(map[int]memEntry)
	}
	m.revision++
	m.records[rec.Index] = memEntry{rec: rec, version: m.revision}
	return m.revision, nil
}
