package pserver

import "time"

// writerWaitMax bounds how long a push waits for the checkpointer (see
// awaitWriter): a disk that hangs must not stop training, so past it the
// snapshot is copied whatever its size, as memory allows.
const writerWaitMax = 5 * time.Second

// awaitWriter holds a push while the snapshot being written has more left
// to copy than preserveLocked may copy (copyMax): past that bound the disk,
// not memory, sets the pace. The wait counts in the snapshot's pause. Once
// a push copied what was left (within the bound, or all of it after
// waiting writerWait for a stuck disk), the next ones do not wait: there
// is nothing left to copy.
func (s *Shard) awaitWriter() {
	var start time.Time
	var giveUp <-chan time.Time
	for {
		s.mu.Lock()
		snap := s.writing
		if snap == nil || snap.uncopiedLocked() <= s.copyMax {
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
			giveUp = time.After(s.writerWait)
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
