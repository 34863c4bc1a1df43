package pserver

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/gtrain/gtrain/checkpoint"
	"github.com/gtrain/gtrain/coord"
	"github.com/gtrain/gtrain/coord/schema"
	"github.com/gtrain/gtrain/internal/jobdir"
	"google.golang.org/grpc"
)

// checkpointer writes the snapshots the shard takes, then marks them in etcd.
func (p *process) checkpointer(ctx context.Context) error {
	p.shard.PrepareCopies()
	for {
		var snap *Snapshot
		select {
		case snap = <-p.shard.Snapshots():
		case <-ctx.Done():
			return nil
		}
		start := p.clock.Now()
		rec, err := p.store.Save(ctx, checkpoint.Snapshot{Index: p.cfg.Index, Step: snap.Step, Base: snap.Base, Sections: snap.Sections})
		if err != nil {
			// Before Release lets the next snapshot be taken: it must not
			// be a delta on this one, which is not on disk.
			p.shard.ForgetRowBase()
		}
		p.metrics.Checkpointed(p.shard.Release(snap), p.clock.Since(start), err == nil)
		if errors.Is(err, checkpoint.ErrConflict) {
			return fmt.Errorf("checkpoint fenced: another process holds this index: %w", err)
		}
		if err != nil {
			if err := p.checkpointFailed(ctx, snap.Step, err); err != nil {
				return err
			}
			continue
		}
		if err := p.markCheckpoint(ctx, rec); err != nil {
			return err
		}
		p.log.Info("checkpoint written", "step", rec.Step, "file", rec.File, "rows_delta_on", snap.Base)
	}
}

// markCheckpoint tells the master this index's checkpoint of rec.Step is
// durable (its mark) and updates the registration's checkpoint step.
func (p *process) markCheckpoint(ctx context.Context, rec checkpoint.Record) error {
	defer func() {
		p.marked.Store(rec.Step)
		select {
		case p.saved <- struct{}{}:
		default:
		}
	}()
	event, recovered := p.ckptHealth.succeeded(p.name, rec.Step)
	p.recMu.Lock()
	p.record.CheckpointStep = rec.Step
	if recovered {
		p.record.CheckpointWarning = ""
	}
	p.recMu.Unlock()
	if recovered {
		p.event(ctx, event)
	}
	// The mark is also the step's record: a restore of the step loads the
	// file only while its sha256 is still this one.
	mark := coord.PutCheckpointMarkOp(coord.PserverCheckpointMarkKey(p.cfg.Job, rec.Step, p.cfg.Index), schema.CheckpointMark{File: rec.File, SHA256: rec.SHA256})
	if _, err := p.cli.Txn(ctx).If(p.rec.Guard...).Then(mark).Commit(); err != nil {
		p.log.Error("checkpoint mark", "err", err)
	}
	return p.publish(ctx)
}

// checkpointFailed keeps training going after a checkpoint of step could
// not be written: logged every time, and on a new failure an event and a
// warning in the registration, which status shows until a write succeeds.
func (p *process) checkpointFailed(ctx context.Context, step int64, err error) error {
	p.log.Error("checkpoint failed; training goes on", "step", step, "err", err)
	warning, isNew := p.ckptHealth.failed(p.name, jobdir.Checkpoints(p.cfg.DataDir, p.spec), step, err)
	if !isNew {
		return nil
	}
	p.recMu.Lock()
	p.record.CheckpointWarning = warning
	p.recMu.Unlock()
	p.event(ctx, warning)
	return p.publish(ctx)
}

// timedSnapshots takes async-mode checkpoints every checkpoint.every.
func (p *process) timedSnapshots(ctx context.Context) {
	every, steps, err := p.spec.Checkpoint.Interval()
	if err != nil {
		return
	}
	tick := p.clock.NewTicker(max(every, 200*time.Millisecond))
	defer tick.Stop()
	last := p.shard.Step()
	for {
		select {
		case <-tick.C():
		case <-ctx.Done():
			return
		}
		now := p.shard.Step()
		if now != last && (steps == 0 || now/steps != last/steps) {
			p.shard.SnapshotNow()
			last = now
		}
	}
}

// finalCheckpointWait bounds finalCheckpoint: the agent signals a role of
// an ended job only after its stop grace (10 s by default).
const finalCheckpointWait = 8 * time.Second

// finalCheckpoint (async) checkpoints the shard once more when its job
// ends, so that `gctl job resume` continues from every update applied: an
// async job has no global checkpoint to roll back to, and each pserver
// restarts from its own newest. The server stops first, so no push lands
// after it. A checkpoint that cannot be written in time is logged: the
// resume then starts from the previous one, as after a crash.
func (p *process) finalCheckpoint(ctx context.Context, srv *grpc.Server) {
	srv.Stop()
	step := p.shard.Step()
	deadline := p.clock.After(finalCheckpointWait)
	for p.marked.Load() < step {
		p.shard.SnapshotNow() // refused while the previous one is written: retried
		select {
		case <-p.saved:
		case <-p.clock.After(50 * time.Millisecond):
		case <-deadline:
			p.log.Warn("final checkpoint not written in time; a resume starts from the previous one", "step", step, "marked", p.marked.Load())
			return
		case <-ctx.Done():
			return
		}
	}
	p.log.Info("final checkpoint written", "step", step)
}
