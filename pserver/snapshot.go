package pserver

import (
	"errors"
	"fmt"
	"time"

	"github.com/gtrain/gtrain/checkpoint"
	"github.com/gtrain/gtrain/pserver/client"
)

// ErrShapeMismatch is returned when a checkpoint does not fit the shard.
var ErrShapeMismatch = errors.New("checkpoint does not match the shard's blocks")

// Snapshot is the shard at one step, written out while training goes on.
// Taking it copies nothing: the checkpointer reads the shard's values a
// piece at a time through Sections, and a change to values not yet written
// first copies what is left of the snapshot (preserveLocked). So the file
// holds exactly the step's values, and memory holds a second copy only of
// what changed before it was written (a slow disk), never one kept
// between checkpoints; the driver's awaitWriter bounds that copy.
type Snapshot struct {
	Step int64
	// Base, when not 0, is the step of the previous snapshot, on which
	// this one's table sections are a delta (rowdelta.go).
	Base     int64
	Sections []checkpoint.Section
	pause    time.Duration // how long keeping it stopped the shard (AddPause)
	held     []*heldSection
	progress chan struct{} // closed and replaced when a section is written or the snapshot ends
}

// heldSection is one section of a snapshot being written.
type heldSection struct {
	snap  *Snapshot
	shard *Shard
	live  []float32 // the shard's values
	saved []float32 // the step's values, copied before the shard changed them; nil while live holds them
	done  bool      // written out: nothing to keep
}

func (h *heldSection) Len() int { return len(h.live) }

// ReadFloats copies a piece of the step's values, under the shard's lock so
// that no change slips in between the check and the copy.
func (h *heldSection) ReadFloats(dst []float32, off int) int {
	h.shard.mu.Lock()
	defer h.shard.mu.Unlock()
	src := h.saved
	if src == nil {
		src = h.live
	}
	n := copy(dst, src[off:])
	if off+n == len(src) {
		h.done, h.saved = true, nil
		h.snap.wroteLocked()
	}
	return n
}

func paramSection(block int) string      { return fmt.Sprintf("param/%d", block) }
func slotSection(block, slot int) string { return fmt.Sprintf("slot/%d/%d", block, slot) }

// Snapshots delivers the snapshots taken at flagged steps (and by SnapshotNow)
// to the checkpointer.
func (s *Shard) Snapshots() <-chan *Snapshot { return s.snapshots }

// Release ends a snapshot once written (or given up) and returns how long
// it stopped the shard: copying values the shard changed before they were
// written, and waiting for its writer (the driver's AddPause; taking it
// copies nothing).
func (s *Shard) Release(snap *Snapshot) time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.writing == snap {
		s.writing = nil
	}
	for _, h := range snap.held {
		h.saved = nil
	}
	if s.writing == nil {
		s.reclaimCopiesLocked()
	}
	snap.wroteLocked()
	return snap.pause
}

// SnapshotNow takes a snapshot at the current step (async mode's timed
// checkpoints) and reports whether the checkpointer accepted it.
func (s *Shard) SnapshotNow() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.snapshotLocked()
}

// snapshotLocked starts a snapshot of the current step; it is refused while
// the previous one is still being written.
func (s *Shard) snapshotLocked() bool {
	if s.writing != nil || len(s.snapshots) == cap(s.snapshots) {
		return false
	}
	snap := &Snapshot{Step: s.step, progress: make(chan struct{})}
	hold := func(name string, live []float32) {
		h := &heldSection{snap: snap, shard: s, live: live}
		snap.held = append(snap.held, h)
		snap.Sections = append(snap.Sections, checkpoint.Section{Name: name, Source: h})
	}
	for _, id := range s.order {
		b := s.blocks[id]
		hold(paramSection(id), b.param)
		for k, slot := range b.slots {
			hold(slotSection(id, k), slot)
		}
	}
	// Rows are copied now: a table changes where a step's rows fall, not
	// in fixed blocks a copy-on-write could hold. Mostly only the rows
	// changed since the previous snapshot (rowdelta.go).
	rows, base := s.tables.rowSections(s.step)
	snap.Sections, snap.Base = append(snap.Sections, rows...), base
	s.writing = snap
	s.snapshots <- snap
	return true
}

// preserveLocked copies the sections of the snapshot being written that are
// not written yet, and returns the snapshot if it copied any; it precedes
// every change of the shard's values.
func (s *Shard) preserveLocked() *Snapshot {
	snap := s.writing
	if snap == nil {
		return nil
	}
	copied := false
	for _, h := range snap.held {
		if !h.done && h.saved == nil {
			h.saved = s.copyLocked(h.live)
			copied = true
		}
	}
	if !copied {
		return nil
	}
	return snap
}

// Preserve copies what the snapshot being written has not saved yet, so
// that the next change of the values (ErrSnapshotUnsaved) may go ahead; it
// returns that snapshot, nil if there was nothing to copy. The copy stops
// the shard: timed, the driver's stopwatch, is handed it to run under the
// shard's lock (so that a wait for the lock does not count) and returns
// its duration, which counts in the snapshot's pause.
func (s *Shard) Preserve(timed func(copy func()) time.Duration) *Snapshot {
	s.mu.Lock()
	defer s.mu.Unlock()
	var snap *Snapshot
	d := timed(func() { snap = s.preserveLocked() })
	if snap != nil {
		snap.pause += d
	}
	return snap
}

// AddPause counts d, a time the shard stopped for snap (a copy, a wait for
// its writer), in the pause Release returns.
func (s *Shard) AddPause(snap *Snapshot, d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	snap.pause += d
}

// unsavedLocked reports whether the snapshot being written has values
// neither written nor copied: a change of them must preserve them first.
func (s *Shard) unsavedLocked() bool {
	return s.writing != nil && s.writing.uncopiedLocked() > 0
}

// sectionsByName indexes a checkpoint's sections by name.
func sectionsByName(sections []checkpoint.Section) map[string][]float32 {
	out := make(map[string][]float32, len(sections))
	for _, sec := range sections {
		out[sec.Name] = sec.Data
	}
	return out
}

// Restore puts the shard at a checkpoint's step and values (a rollback or a
// restart) and enters the master's rollbackEpoch, under one lock so that no
// push of an older rollback epoch slips in between. Pending pushes are
// dropped and waiting pulls are woken to abort.
func (s *Shard) Restore(step, rollbackEpoch int64, sections []checkpoint.Section) error {
	byName := sectionsByName(sections)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.preserveLocked()
	for _, id := range s.order {
		b := s.blocks[id]
		want := []string{paramSection(id)}
		for k := range b.slots {
			want = append(want, slotSection(id, k))
		}
		for _, name := range want {
			if d, ok := byName[name]; !ok || len(d) != b.Len {
				return fmt.Errorf("section %s: %w (want %d floats, have %d)", name, ErrShapeMismatch, b.Len, len(d))
			}
		}
	}
	if err := s.tables.restore(byName); err != nil {
		return err
	}
	for _, id := range s.order {
		b := s.blocks[id]
		copy(b.param, byName[paramSection(id)])
		for k, slot := range b.slots {
			copy(slot, byName[slotSection(id, k)])
		}
	}
	s.resetLocked(step, rollbackEpoch)
	return nil
}

// Rebase enters rollbackEpoch without touching the values: a shard already
// at the rollback's step holds exactly that step's values (sync training is
// deterministic). Pending pushes are dropped, waiting pulls abort.
func (s *Shard) Rebase(rollbackEpoch int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.resetLocked(s.step, rollbackEpoch)
}

// Reinit puts the shard back at step 0 with the initial parameters (a
// rollback to the start when no complete checkpoint exists).
func (s *Shard) Reinit(rollbackEpoch int64, init func(b client.Block, dst []float32)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.preserveLocked()
	for _, id := range s.order {
		b := s.blocks[id]
		clear(b.param)
		if init != nil {
			init(b.Block, b.param)
		}
		s.initSlots(b)
	}
	s.tables.reset()
	s.resetLocked(0, rollbackEpoch)
}

// resetLocked ends every wait on the old values: pending pushes are dropped
// and waiting pulls see the restore count move. rollbackEpoch never goes
// back (a restart's restore passes 0: none).
func (s *Shard) resetLocked(step, rollbackEpoch int64) {
	s.gather.reset(s.free)
	s.tables.dropPending()
	s.step = step
	s.restores++
	s.rollbackEpoch = max(s.rollbackEpoch, rollbackEpoch)
	s.wakeLocked()
}

// WriterBehind reports whether the snapshot being written has more left to
// save than a change may copy (copyMax): past that bound the disk, not
// memory, sets the pace (the driver's awaitWriter). progress is closed when
// the writer moves on.
func (s *Shard) WriterBehind() (snap *Snapshot, progress <-chan struct{}, behind bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	snap = s.writing
	if snap == nil {
		return nil, nil, false
	}
	return snap, snap.progress, snap.uncopiedLocked() > s.copyMax
}

// uncopiedLocked counts the snapshot's floats neither written nor copied
// yet: what a change of the shard would have to copy. (Counting the copied
// ones too made every push after a stuck disk's first wait writerWait.)
func (snap *Snapshot) uncopiedLocked() int {
	n := 0
	for _, h := range snap.held {
		if !h.done && h.saved == nil {
			n += len(h.live)
		}
	}
	return n
}

// wroteLocked tells the pushes waiting in awaitWriter that the writer moved on.
func (snap *Snapshot) wroteLocked() {
	close(snap.progress)
	snap.progress = make(chan struct{})
}
