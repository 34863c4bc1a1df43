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

// Snapshot is a copy of the shard at one step: parameters and optimizer slots.
type Snapshot struct {
	Step     int64
	Sections []checkpoint.Section
	Pause    time.Duration // how long taking it stopped the shard (for metrics)
}

func paramSection(block int) string      { return fmt.Sprintf("param/%d", block) }
func slotSection(block, slot int) string { return fmt.Sprintf("slot/%d/%d", block, slot) }

// Snapshots delivers the snapshots taken at flagged steps (and by SnapshotNow)
// to the checkpointer.
func (s *Shard) Snapshots() <-chan *Snapshot { return s.snapshots }

// Release returns a written snapshot's buffers for reuse.
func (s *Shard) Release(snap *Snapshot) {
	select {
	case s.spare <- snap:
	default:
	}
}

// SnapshotNow takes a snapshot at the current step (async mode's timed
// checkpoints) and reports whether the checkpointer accepted it.
func (s *Shard) SnapshotNow() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.snapshotLocked()
}

// snapshotLocked copies the shard into a snapshot buffer: the only pause the
// pserver takes for a checkpoint (one memory copy); the file is written
// outside the lock.
func (s *Shard) snapshotLocked() bool {
	if len(s.snapshots) == cap(s.snapshots) {
		return false // the writer is still busy with the previous one
	}
	start := time.Now()
	var snap *Snapshot
	select {
	case snap = <-s.spare:
	default:
		snap = &Snapshot{}
		for _, id := range s.order {
			b := s.blocks[id]
			snap.Sections = append(snap.Sections, checkpoint.Section{Name: paramSection(id), Data: make([]float32, b.Len)})
			for k := range b.slots {
				snap.Sections = append(snap.Sections, checkpoint.Section{Name: slotSection(id, k), Data: make([]float32, b.Len)})
			}
		}
	}
	i := 0
	for _, id := range s.order {
		b := s.blocks[id]
		copy(snap.Sections[i].Data, b.param)
		i++
		for _, slot := range b.slots {
			copy(snap.Sections[i].Data, slot)
			i++
		}
	}
	snap.Step, snap.Pause = s.step, time.Since(start)
	s.snapshots <- snap
	return true
}

// Restore puts the shard at a checkpoint's step and values (a rollback or a
// restart) and enters the master's rollbackEpoch, under one lock so that no
// push of an older rollback epoch slips in between. Pending pushes are
// dropped and waiting pulls are woken to abort.
func (s *Shard) Restore(step, rollbackEpoch int64, sections []checkpoint.Section) error {
	byName := make(map[string][]float32, len(sections))
	for _, sec := range sections {
		byName[sec.Name] = sec.Data
	}
	s.mu.Lock()
	defer s.mu.Unlock()
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
	for _, id := range s.order {
		b := s.blocks[id]
		clear(b.param)
		if init != nil {
			init(b.Block, b.param)
		}
		for _, slot := range b.slots {
			clear(slot)
		}
	}
	s.resetLocked(0, rollbackEpoch)
}

// resetLocked ends every wait on the old values: pending pushes are dropped
// and waiting pulls see the restore count move. rollbackEpoch never goes
// back (a restart's restore passes 0: none).
func (s *Shard) resetLocked(step, rollbackEpoch int64) {
	s.gather.reset(&s.free)
	s.step = step
	s.restores++
	s.rollbackEpoch = max(s.rollbackEpoch, rollbackEpoch)
	s.wakeLocked()
}
