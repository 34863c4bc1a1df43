package master

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"

	"github.com/gtrain/gtrain/checkpoint"
	"github.com/gtrain/gtrain/coord"
	"github.com/gtrain/gtrain/pserver"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// recovery keeps a sync job restorable: it writes the master's state at every
// checkpointed step, declares a global checkpoint once every participant has
// its part of a step on disk, and rolls the whole job back to the newest
// complete one when a pserver comes back from a crash.
type recovery struct {
	cli      *clientv3.Client
	lead     *coord.Leadership
	job      string
	pservers int
	core     *Core
	ps       *pserver.Dynamic
	store    *checkpoint.Store // the master's own checkpoints
	log      *slog.Logger
	node     string
	keep     int
	leases   map[int]int64 // pserver index -> lease of the incarnation last seen ready
	mu       sync.Mutex    // one rollback at a time
}

const masterMark = "master"

// writeCheckpoints saves the master's state at each checkpoint step.
func (r *recovery) writeCheckpoints(ctx context.Context) {
	for {
		var st State
		select {
		case st = <-r.core.Snapshots():
		case <-ctx.Done():
			return
		}
		meta, err := json.Marshal(st)
		if err != nil {
			r.log.Error("encode master checkpoint", "err", err)
			continue
		}
		rec, err := r.store.Save(ctx, checkpoint.Snapshot{Index: 0, Step: st.Meta.Step, Meta: meta})
		if err != nil {
			r.log.Error("master checkpoint failed; training goes on", "step", st.Meta.Step, "err", err)
			continue
		}
		if err := r.lead.Commit(ctx, clientv3.OpPut(coord.CheckpointMarkKey(r.job, rec.Step, masterMark), rec.File)); err != nil {
			r.log.Error("master checkpoint mark", "err", err)
		}
	}
}

// trackGlobal declares step S the global checkpoint once the master and every
// pserver have marked S. It returns when the watch ends (an error unless ctx
// is done: a master that stops tracking checkpoints must not go on).
func (r *recovery) trackGlobal(ctx context.Context) error {
	prefix := coord.CheckpointMarkPrefix(r.job)
	for resp := range r.cli.Watch(ctx, prefix, clientv3.WithPrefix()) {
		if err := resp.Err(); err != nil {
			return fmt.Errorf("watch checkpoint marks: %w", err)
		}
		for _, ev := range resp.Events {
			if ev.Type != clientv3.EventTypePut {
				continue
			}
			stepStr, _, _ := strings.Cut(strings.TrimPrefix(string(ev.Kv.Key), prefix), "/")
			step, err := strconv.ParseInt(stepStr, 10, 64)
			if err != nil {
				continue
			}
			if err := r.maybeDeclare(ctx, step); err != nil {
				r.log.Error("declare global checkpoint", "step", step, "err", err)
			}
		}
	}
	if ctx.Err() != nil {
		return nil
	}
	return errors.New("watch of checkpoint marks ended")
}

// maybeDeclare makes step the newest global checkpoint if every participant
// marked it. The record is re-read each time: a rollback rewrites it.
func (r *recovery) maybeDeclare(ctx context.Context, step int64) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	prefix := coord.CheckpointMarkPrefix(r.job)
	var global coord.GlobalCheckpoint
	if _, err := coord.GetJSON(ctx, r.cli, coord.GlobalCheckpointKey(r.job), &global); err != nil && !errors.Is(err, coord.ErrNotFound) {
		return err
	}
	if step <= global.Step {
		return nil
	}
	marks, err := r.cli.Get(ctx, fmt.Sprintf("%s%012d/", prefix, step), clientv3.WithPrefix(), clientv3.WithCountOnly())
	if err != nil || marks.Count < int64(r.pservers+1) {
		return err
	}
	pass, _ := r.core.Position()
	kept := append(global.Steps, step)
	kept = kept[max(0, len(kept)-r.keep):]
	global = coord.GlobalCheckpoint{Step: step, Pass: pass, Steps: kept}
	ops := []clientv3.Op{clientv3.OpPut(coord.GlobalCheckpointKey(r.job), coord.MustJSON(global))}
	// Marks of steps no longer kept are not needed to decide anything.
	ops = append(ops, clientv3.OpDelete(prefix, clientv3.WithRange(fmt.Sprintf("%s%012d/", prefix, kept[0]))))
	if err := r.lead.Commit(ctx, ops...); err != nil {
		return err
	}
	r.log.Info("global checkpoint complete", "step", step)
	return nil
}

// watchPservers rolls back when a pserver comes back from a crash: a new
// incarnation (lease) of an index announces itself ready, restored at a
// complete global checkpoint, while the others went on.
func (r *recovery) watchPservers(ctx context.Context, rev int64) error {
	for resp := range r.cli.Watch(ctx, coord.PserverPrefix(r.job), clientv3.WithPrefix(), clientv3.WithRev(rev)) {
		if err := resp.Err(); err != nil {
			return fmt.Errorf("watch pservers: %w", err)
		}
		for _, ev := range resp.Events {
			if ev.Type != clientv3.EventTypePut {
				continue
			}
			var rec coord.PserverRecord
			if json.Unmarshal(ev.Kv.Value, &rec) != nil || !rec.Ready || r.leases[rec.Index] == ev.Kv.Lease {
				continue
			}
			r.leases[rec.Index] = ev.Kv.Lease
			why := fmt.Sprintf("pserver-%d restarted (pid %d)", rec.Index, rec.PID)
			if err := r.rollback(ctx, why, rec.RestoredStep); err != nil {
				return err
			}
		}
	}
	if ctx.Err() != nil {
		return nil
	}
	return errors.New("watch of pservers ended")
}

// requestRollback serves a trainer that found the pservers at different
// steps; a rollback already done since its epoch answers it.
func (r *recovery) requestRollback(ctx context.Context, epoch int64, why string) error {
	if r.core.Epoch() > epoch {
		return nil
	}
	return r.rollback(ctx, why, -1)
}

// readyLeases records the incarnations serving now; it returns the etcd
// revision to watch from.
func (r *recovery) readyLeases(ctx context.Context) (int64, error) {
	resp, err := r.cli.Get(ctx, coord.PserverPrefix(r.job), clientv3.WithPrefix())
	if err != nil {
		return 0, err
	}
	r.leases = map[int]int64{}
	for _, kv := range resp.Kvs {
		var rec coord.PserverRecord
		if json.Unmarshal(kv.Value, &rec) == nil && rec.Ready {
			r.leases[rec.Index] = kv.Lease
		}
	}
	return resp.Header.Revision + 1, nil
}

// checkConsistent rolls back at start when the pservers and the stored
// master state do not describe one step and one epoch (e.g. everything
// restarted after an agent crash, each pserver from a global checkpoint; or
// a master died in the middle of a rollback).
func (r *recovery) checkConsistent(ctx context.Context) error {
	steps, epochs, err := r.ps.Client().Steps(ctx)
	if err != nil {
		return err
	}
	_, at := r.core.Position()
	epoch := r.core.Epoch()
	lowest := steps[0]
	consistent := true
	for i, s := range steps {
		lowest = min(lowest, s)
		consistent = consistent && s == steps[0] && s >= at && s <= at+1 && epochs[i] <= epoch
	}
	if consistent {
		return nil
	}
	return r.rollback(ctx, fmt.Sprintf("pservers at steps %v, epochs %v; the master at step %d, epoch %d", steps, epochs, at, epoch), lowest)
}

// checkEpochs rolls back when a pserver is in a newer epoch than the master:
// a rollback was cut short (its master died after restoring some pservers).
func (r *recovery) checkEpochs(ctx context.Context) error {
	_, epochs, err := r.ps.Client().Steps(ctx)
	if err != nil {
		return nil // a pserver restarting: its return triggers its own rollback
	}
	epoch := r.core.Epoch()
	for i, e := range epochs {
		if e > epoch {
			return r.rollback(ctx, fmt.Sprintf("pserver-%d is in epoch %d, the master in %d (an interrupted rollback)", i, e, epoch), -1)
		}
	}
	return nil
}

// rollback puts every pserver and the master at complete global checkpoint
// target (-1: the newest; 0: the start; older than the newest when the newest
// proved damaged) in a new epoch, above any epoch a pserver may have entered
// from an interrupted rollback. The master's own state is loaded first, so a
// failure leaves the pservers untouched.
func (r *recovery) rollback(ctx context.Context, why string, target int64) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.core.Pause()
	var g coord.GlobalCheckpoint
	if _, err := coord.GetJSON(ctx, r.cli, coord.GlobalCheckpointKey(r.job), &g); err != nil && !errors.Is(err, coord.ErrNotFound) {
		return err
	}
	if target < 0 {
		target = g.Step
	}
	if !g.Has(target) {
		return fmt.Errorf("master: rollback to step %d: not a complete global checkpoint (kept: %v in %s)", target, g.Steps, coord.GlobalCheckpointKey(r.job))
	}
	r.log.Warn("rolling back to a complete global checkpoint", "why", why, "step", target)
	var state *State
	if target > 0 {
		snap, err := r.store.LoadStep(ctx, target)
		if err != nil {
			return fmt.Errorf("master: rollback: %w", err)
		}
		state = &State{}
		if err := json.Unmarshal(snap.Meta, state); err != nil {
			return fmt.Errorf("master: rollback: decode checkpoint of step %d: %w", target, err)
		}
	}
	if err := r.ps.Refresh(ctx); err != nil {
		return err
	}
	_, epochs, err := r.ps.Client().Steps(ctx)
	if err != nil {
		return err
	}
	epoch := r.core.Epoch()
	for _, e := range epochs {
		epoch = max(epoch, e)
	}
	epoch++
	if err := r.ps.Client().Restore(ctx, target, epoch, r.lead.Rev()); err != nil {
		return err
	}
	if err := r.core.Rollback(ctx, state, epoch); err != nil {
		return err
	}
	// Forget the abandoned history: its checkpoints are deleted as the new
	// one is written, so neither its global steps nor its marks may count.
	var kept []int64
	for _, s := range g.Steps {
		if s <= target {
			kept = append(kept, s)
		}
	}
	g = coord.GlobalCheckpoint{Step: target, Pass: g.Pass, Steps: kept}
	prefix := coord.CheckpointMarkPrefix(r.job)
	if err := r.lead.Commit(ctx, clientv3.OpPut(coord.GlobalCheckpointKey(r.job), coord.MustJSON(g)),
		clientv3.OpDelete(fmt.Sprintf("%s%012d/", prefix, target+1), clientv3.WithRange(clientv3.GetPrefixRangeEnd(prefix)))); err != nil {
		return err
	}
	pass, _ := r.core.Position()
	_ = coord.AppendEvent(ctx, r.cli, r.job, fmt.Sprintf("%s: job rolled back to global checkpoint step %d (pass %d), epoch %d", why, target, pass, epoch))
	return nil
}
