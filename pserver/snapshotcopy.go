package pserver

import "slices"

// A snapshot's values that a step changes before they are written are
// copied (preserveLocked) into one spare buffer of copyMax floats, kept for
// the shard's life and touched before the first snapshot: copied into
// fresh pages, 32 MiB took 8-14 ms, mostly page faults, where a copy into
// memory already touched takes about 1.3 ms. The buffer is within what
// tuneRuntime's limit counts (a snapshot's copy was already), so it moves
// the peak resident memory not at all, only keeps it between checkpoints.

// PrepareCopies allocates and touches the buffer snapshots copy into, off
// the step path: the checkpointer calls it before its first snapshot.
// Without it a copy allocates, as it does past the buffer's size.
func (s *Shard) PrepareCopies() {
	s.mu.RLock()
	have, n := s.spare != nil, s.copyMax
	s.mu.RUnlock()
	if have || n == 0 {
		return
	}
	buf := make([]float32, n)
	for i := 0; i < len(buf); i += 1024 { // one store per 4 KiB page
		buf[i] = 0
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.spare == nil {
		s.spare, s.spareFree = buf, buf
	}
}

// copyLocked returns a copy of live: in the spare buffer while it has room.
func (s *Shard) copyLocked(live []float32) []float32 {
	n := len(live)
	if len(s.spareFree) < n {
		return slices.Clone(live)
	}
	dst := s.spareFree[:n:n]
	s.spareFree = s.spareFree[n:]
	copy(dst, live)
	return dst
}

// reclaimCopiesLocked frees the whole spare buffer: no snapshot holds a
// copy in it any more.
func (s *Shard) reclaimCopiesLocked() { s.spareFree = s.spare }
