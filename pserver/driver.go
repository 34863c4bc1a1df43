package pserver

import (
	"errors"
	"time"

	"github.com/gtrain/gtrain/internal/clock"
)

// writerWaitMax bounds how long a push waits for the checkpointer (see
// awaitWriter): a disk that hangs must not stop training, so past it the
// snapshot is copied whatever its size, as memory allows.
const writerWaitMax = 5 * time.Second

// shardDriver is what the pure Shard leaves to its caller (the server's
// pushes, the process's restores): waiting for the checkpoint writer, and
// timing how long a snapshot stopped the shard.
type shardDriver struct {
	shard *Shard
	clock clock.Clock
	// writerWait is writerWaitMax (tests shorten it).
	writerWait time.Duration
}

func newShardDriver(shard *Shard, c clock.Clock) shardDriver {
	return shardDriver{shard: shard, clock: clock.Or(c), writerWait: writerWaitMax}
}

// push hands g to the shard (Shard.Push), after waiting for a writer too
// far behind (awaitWriter); a push the shard refuses until the snapshot's
// values are saved preserves them, timed, and goes again.
func (d shardDriver) push(g *Gradient) (applied bool, step int64, err error) {
	d.awaitWriter()
	for {
		applied, step, err = d.shard.Push(g)
		if !errors.Is(err, ErrSnapshotUnsaved) {
			return applied, step, err
		}
		d.preserve()
	}
}

// preserve copies what the snapshot being written has not saved, before a
// change of the values, and counts the copy in its pause.
func (d shardDriver) preserve() { d.shard.Preserve(d.timed) }

// timed runs f and returns how long it took.
func (d shardDriver) timed(f func()) time.Duration {
	start := d.clock.Now()
	f()
	return d.clock.Since(start)
}

// awaitWriter holds a push while the snapshot being written has more left
// to copy than a change may copy (Shard.WriterBehind). The wait counts in
// the snapshot's pause. Once a push copied what was left (within the
// bound, or all of it after waiting writerWait for a stuck disk), the next
// ones do not wait: there is nothing left to copy.
func (d shardDriver) awaitWriter() {
	var start time.Time
	var giveUp <-chan time.Time
	for {
		snap, progress, behind := d.shard.WriterBehind()
		if !behind {
			if snap != nil && giveUp != nil {
				d.shard.AddPause(snap, d.clock.Since(start))
			}
			return
		}
		if giveUp == nil {
			start = d.clock.Now()
			timer := d.clock.NewTimer(d.writerWait)
			defer timer.Stop()
			giveUp = timer.C()
		}
		select {
		case <-progress:
		case <-giveUp:
			d.shard.AddPause(snap, d.clock.Since(start))
			return
		}
	}
}
