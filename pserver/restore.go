package pserver

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/gtrain/gtrain/checkpoint"
	"github.com/gtrain/gtrain/coord"
	"github.com/gtrain/gtrain/coord/schema"
	"github.com/gtrain/gtrain/jobspec"
)

// restoreAtStart puts the shard where the job can continue from. It never
// re-initialises over a checkpoint it was told exists: a lost one is an error.
func (p *process) restoreAtStart(ctx context.Context) error {
	if p.mode == jobspec.ModeSync {
		return p.restoreGlobal(ctx)
	}
	return p.restoreOwn(ctx)
}

// restoreGlobal (sync) restores the newest complete global checkpoint, so
// every pserver and the master agree on one step (the master rolls the
// others back to it); an unusable file (damaged, missing, or whose sha256
// is not the one its mark records) falls back to the previous one.
func (p *process) restoreGlobal(ctx context.Context) error {
	var g schema.GlobalCheckpoint
	_, err := coord.GetJSON(ctx, p.cli, coord.GlobalCheckpointKey(p.cfg.Job), &g)
	switch {
	case errors.Is(err, coord.ErrNotFound) || (err == nil && len(g.Steps) == 0):
		if _, _, err := p.store.Load(ctx); err == nil {
			p.event(ctx, fmt.Sprintf("%s has checkpoints but the job has no complete global checkpoint: starting from step 0", p.name))
		}
		return nil
	case err != nil:
		return err
	}
	var failures []string
	for i := len(g.Steps) - 1; i >= 0; i-- {
		err := p.restoreStep(ctx, g.Steps[i], 0)
		if err == nil {
			if len(failures) > 0 {
				p.event(ctx, fmt.Sprintf("%s fell back to checkpoint step %d: %s", p.name, g.Steps[i], strings.Join(failures, "; ")))
			}
			return nil
		}
		failures = append(failures, fmt.Sprintf("step %d unusable: %v", g.Steps[i], err))
	}
	return fmt.Errorf("%w: no kept global checkpoint loads: %s", checkpoint.ErrCheckpointLost, strings.Join(failures, "; "))
}

// restoreOwn (async) restores this shard's own newest checkpoint that
// verifies against its record (the newest's, or an older step's mark).
func (p *process) restoreOwn(ctx context.Context) error {
	snap, report, err := p.store.Load(ctx)
	switch {
	case errors.Is(err, checkpoint.ErrNoCheckpoint):
		return nil
	case err != nil:
		return err
	}
	for _, s := range report.Skipped {
		p.event(ctx, fmt.Sprintf("%s skipped checkpoint %s (step %d): %s", p.name, s.File, s.Step, s.Reason))
	}
	if err := loadRowChain(p.store, snap, p.shard.tables.names); err != nil {
		return err
	}
	if err := p.shard.Restore(snap.Step, 0, snap.Sections); err != nil {
		return err
	}
	p.marked.Store(snap.Step)
	p.event(ctx, fmt.Sprintf("%s restarted from checkpoint step %d", p.name, snap.Step))
	return nil
}

// restoreStep loads the checkpoint of exactly step (0: the initial values)
// and enters the master's rollbackEpoch. A shard already at step holds those
// very values (sync training is deterministic), so only the rollback epoch
// changes.
func (p *process) restoreStep(ctx context.Context, step, rollbackEpoch int64) error {
	if p.shard.Step() == step {
		p.shard.Rebase(rollbackEpoch)
		return nil
	}
	if step == 0 {
		p.driver.preserve()
		p.shard.Reinit(rollbackEpoch, p.init)
		return nil
	}
	if p.recutAt(step) {
		return p.restoreRecut(ctx, step, rollbackEpoch)
	}
	snap, err := p.store.LoadStep(ctx, step)
	if err != nil {
		return err
	}
	if err := loadRowChain(p.store, snap, p.shard.tables.names); err != nil {
		return err
	}
	p.driver.preserve()
	if err := p.shard.Restore(step, rollbackEpoch, snap.Sections); err != nil {
		return err
	}
	p.log.Info("restored checkpoint", "step", step)
	p.event(ctx, fmt.Sprintf("%s restored from checkpoint step %d", p.name, step))
	return nil
}
