package recovery

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/gtrain/gtrain/coord"
	"github.com/gtrain/gtrain/coord/schema"
)

// Re-sharding (sync): the operator records a pserver count
// (schema.ReshardRequest); the master
//
//  1. flags the next step for a checkpoint and waits until a global
//     checkpoint S newer than the request's time is declared (training goes on);
//  2. pauses (hands out nothing), then commits layout generation
//     {M pservers, from S, cut from the N of S's files} with the job record's
//     count M and the global checkpoint reduced to S alone (coord.CommitLayout,
//     fenced on the leadership): no rollback crosses a generation;
//  3. rolls the job back to S in a new epoch: the pservers, each of which
//     re-shards itself in place (pserver/reshard.go), are restored at S in
//     the new cut, the trainers see the epoch and re-read the layout
//     (client.Dynamic), and the master resumes from its own checkpoint of S;
//  4. once the first step under the new layout commits, records the pause
//     in the layout record and an event.
//
// Every step is in etcd before the next: a master killed at any point leaves
// either the old generation (a successor starts over) or the new one (a
// successor rolls back to S, as the pservers restarted there, and finishes
// step 4). Steps after S the old layout applied are discarded by the
// rollback and redone, so nothing is applied twice or lost.

// reshardPoll bounds how long a missed watch event delays a re-shard.
const reshardPoll = 2 * time.Second

// errReshardAbandoned: the job finished, or was evaluating its last pass,
// before the re-shard could start.
var errReshardAbandoned = errors.New("the job ended before the re-shard could start")

// reshardLoop carries out the operator's pserver count until ctx ends; a
// failure stops the master so that a successor resumes from etcd.
func (r *Recovery) reshardLoop(ctx context.Context, stop context.CancelFunc) {
	for ctx.Err() == nil {
		wctx, cancel := context.WithTimeout(ctx, reshardPoll)
		changed := r.layouts.ReshardChanged(wctx)
		err := r.reshardOnce(ctx)
		if err != nil && ctx.Err() == nil && !errors.Is(err, errReshardAbandoned) {
			cancel()
			r.log.Error("re-shard failed; master exits so a successor resumes it", "err", err)
			stop()
			return
		}
		select {
		case <-changed:
		case <-wctx.Done():
		}
		cancel()
	}
}

// reshardOnce finishes a re-shard under way or starts the one requested.
func (r *Recovery) reshardOnce(ctx context.Context) error {
	req, layout, err := r.layouts.Reshard(ctx)
	if err != nil {
		// Nothing started: an etcd hiccup (a leader election) is no reason
		// to give up the mastership; the next poll reads again.
		r.log.Warn("cannot read the re-shard request; reading again at the next poll", "err", err)
		return nil
	}
	if layout.Resharding() {
		return r.finishReshard(ctx, layout)
	}
	from := r.ps.Servers()
	if req.Pservers < 1 || req.Pservers == from || r.driver.Done() {
		return nil
	}
	return r.reshard(ctx, from, req.Pservers, layout)
}

// reshard moves the job from from pservers to to (steps 1-4 above).
func (r *Recovery) reshard(ctx context.Context, from, to int, cur schema.LayoutRecord) error {
	r.log.Info("re-sharding pservers: waiting for a global checkpoint", "from", from, "to", to)
	if err := r.waitGlobalCheckpoint(ctx); err != nil {
		return err
	}
	next, err := r.switchLayout(ctx, from, to, cur)
	if err != nil {
		return err
	}
	return r.finishReshard(ctx, next)
}

// switchLayout pauses, commits the next generation and rolls the job back
// to its step, all under r.mu: no checkpoint is declared and no other
// rollback runs in between.
func (r *Recovery) switchLayout(ctx context.Context, from, to int, cur schema.LayoutRecord) (schema.LayoutRecord, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	paused := time.Now()
	if !r.driver.PauseUnlessFinishing() {
		r.log.Info("re-shard given up: the job is finishing", "from", from, "to", to)
		return cur, errReshardAbandoned
	}
	next, err := r.commitLayout(ctx, from, to, cur, paused)
	if err != nil {
		return next, err
	}
	why := fmt.Sprintf("pservers re-sharded from %d to %d (layout generation %d)", from, to, next.Generation)
	if err := r.rollbackLocked(ctx, why, next.FromStep); err != nil {
		return next, err
	}
	return next, r.adoptIncarnationsLocked(ctx)
}

// waitGlobalCheckpoint asks for a checkpoint at the next step and waits
// until a global checkpoint newer than the job's step now is declared. The
// flag is asked again now and then: a rollback meanwhile forgets it.
func (r *Recovery) waitGlobalCheckpoint(ctx context.Context) error {
	_, at := r.driver.Position()
	for {
		r.driver.CheckpointNext()
		g, mod, err := r.checkpoints.Global(ctx)
		if err != nil {
			return err
		}
		if g.Step > at {
			return nil
		}
		if r.driver.Done() {
			return errReshardAbandoned
		}
		var rev int64 // 0: from now (no record yet)
		if mod > 0 {
			rev = mod + 1 // no change since the read is missed
		}
		wctx, cancel := context.WithTimeout(ctx, reshardPoll)
		select {
		case <-r.checkpoints.GlobalChanged(wctx, rev):
		case <-wctx.Done():
		}
		cancel()
		if ctx.Err() != nil {
			return ctx.Err()
		}
	}
}

// commitLayout records the next generation from the newest global
// checkpoint (r.mu held). A job record
// changed under it (a trainer scale) is read again.
func (r *Recovery) commitLayout(ctx context.Context, from, to int, cur schema.LayoutRecord, paused time.Time) (schema.LayoutRecord, error) {
	for {
		g, rev, err := r.checkpoints.Global(ctx)
		if err == nil && rev == 0 {
			err = errors.New("no global checkpoint record to re-shard from")
		}
		if err != nil {
			return schema.LayoutRecord{}, err
		}
		next := coord.NextLayout(cur, from, to, g.Step, paused)
		err = r.layouts.Commit(ctx, next, g)
		if errors.Is(err, coord.ErrLayoutMoved) && ctx.Err() == nil {
			continue
		}
		if err != nil {
			return schema.LayoutRecord{}, err
		}
		r.log.Info("layout generation committed", "generation", next.Generation, "pservers", to, "step", next.FromStep)
		return next, nil
	}
}
