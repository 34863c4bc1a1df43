package bench

import (
	"time"
)

// CheckpointPause returns the longest a pserver holding floats parameters
// (sgd: no optimizer slots) stopped serving for a checkpoint while training
// (1 pserver, 1 trainer, sync, a checkpoint flagged every other step,
// written to dir by a real checkpoint store), and the milliseconds a plain
// copy of that many bytes takes (the ceiling). Taking a snapshot copies
// nothing (see pserver.Snapshot); the pause is a step applied while the
// snapshot is still being written: the copy of what is left, and a wait
// for the disk while more than the copy bound (half the parameters) is left.
func CheckpointPause(floats, steps int, dir string) (pauseMs, copyMs float64, err error) {
	r, err := newRig(floats, 1, 1, dir)
	if err != nil {
		return 0, 0, err
	}
	for i := 0; i < steps; i++ {
		if err := r.step(i%2 == 0); err != nil {
			r.close()
			return 0, 0, err
		}
	}
	r.close()
	longest := time.Duration(0)
	for more := true; more; {
		select {
		case p := <-r.pauses:
			longest = max(longest, p)
		default:
			more = false
		}
	}
	src, dst := make([]float32, floats), make([]float32, floats)
	fill(src)
	copy(dst, src)
	bestCopy := time.Duration(1 << 62)
	for i := 0; i < 5; i++ {
		start := time.Now()
		copy(dst, src)
		bestCopy = min(bestCopy, time.Since(start))
	}
	return float64(longest) / 1e6, float64(bestCopy) / 1e6, nil
}

func fill(v []float32) {
	for i := range v {
		v[i] = float32(i%1000) * 1e-3
	}
}
