package pserver

import "time"

// writerWaitMax bounds how long a push waits for the checkpointer (see
// awaitWriter): a disk that hangs must not stop training, so past it the
// snapshot is copied whatever its size, as memory allows.
const writerWaitMax = 5 * time.Second

// awaitWriter holds a push while the snapshot being written has more left
// to write than preserveLocked may copy (copyMax): past that bound the disk,
// not memory, sets the pace. The wait counts in the snapshot's pause.
func (s *Shard) awaitWriter() {
	var start time.Time
	var giveUp <-chan time.Time
	for {
		s.mu.Lock()
		snap := s.writing
		if snap == nil || snap.unwrittenLocked() <= s.copyMax {
			if snap != nil && !start.IsZero() {
				snap.pause += time.Since(start)
			}
			s.mu.Unlock()
			return
		}
		progress := snap.progress
		s.mu.Unlock()
		if start.IsZero() {
			start = time.Now()
			giveUp = time.After(writerWaitMax)
		}
		select {
		case <-progress:
		case <-giveUp:
			s.mu.Lock()
			snap.pause += time.Since(start)
			s.mu.Unlock()
			return
		}
	}
}

// unwrittenLocked counts the snapshot's floats not written yet, copied or
// not: what the snapshot holds, or may have to copy, beyond the shard.
func (snap *Snapshot) unwrittenLocked() int {
	n := 0
	for _, h := range snap.held {
		if !h.done {
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
