package master

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"

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
// pserver have marked S.
func (r *recovery) trackGlobal(ctx context.Context) {
	prefix := coord.CheckpointMarkPrefix(r.job)
	var global coord.GlobalCheckpoint
	_, _ = coord.GetJSON(ctx, r.cli, coord.GlobalCheckpointKey(r.job), &global)
	for resp := range r.cli.Watch(ctx, prefix, clientv3.WithPrefix()) {
		for _, ev := range resp.Events {
			if ev.Type != clientv3.EventTypePut {
				continue
			}
			stepStr, _, _ := strings.Cut(strings.TrimPrefix(string(ev.Kv.Key), prefix), "/")
			step, err := strconv.ParseInt(stepStr, 10, 64)
			if err != nil || step <= global.Step {
				continue
			}
			marks, err := r.cli.Get(ctx, fmt.Sprintf("%s%012d/", prefix, step), clientv3.WithPrefix(), clientv3.WithCountOnly())
			if err != nil || marks.Count < int64(r.pservers+1) {
				continue
			}
			pass, _ := r.core.Position()
			kept := append(global.Steps, step)
			kept = kept[max(0, len(kept)-r.keep):]
			global = coord.GlobalCheckpoint{Step: step, Pass: pass, Steps: kept}
			ops := []clientv3.Op{clientv3.OpPut(coord.GlobalCheckpointKey(r.job), coord.MustJSON(global))}
			// Marks of steps no longer kept are not needed to decide anything.
			ops = append(ops, clientv3.OpDelete(prefix, clientv3.WithRange(fmt.Sprintf("%s%012d/", prefix, kept[0]))))
			if err := r.lead.Commit(ctx, ops...); err != nil {
				r.log.Error("declare global checkpoint", "step", step, "err", err)
				continue
			}
			r.log.Info("global checkpoint complete", "step", step)
		}
	}
}

// watchPservers rolls back when a pserver comes back from a crash: a new
// incarnation (lease) of an index announces itself ready, restored at a
// complete global checkpoint, while the others went on.
func (r *recovery) watchPservers(ctx context.Context, rev int64) error {
	for resp := range r.cli.Watch(ctx, coord.PserverPrefix(r.job), clientv3.WithPrefix(), clientv3.WithRev(rev)) {
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
	return ctx.Err()
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
// master state do not describe one step (e.g. everything restarted after an
// agent crash, each pserver from a global checkpoint).
func (r *recovery) checkConsistent(ctx context.Context) error {
	steps, err := r.ps.Client().Steps(ctx)
	if err != nil {
		return err
	}
	_, at := r.core.Position()
	lowest := steps[0]
	consistent := true
	for _, s := range steps {
		lowest = min(lowest, s)
		consistent = consistent && s == steps[0] && s >= at && s <= at+1
	}
	if consistent {
		return nil
	}
	return r.rollback(ctx, fmt.Sprintf("pserver steps %v do not match the master's step %d", steps, at), lowest)
}

// rollback puts every pserver and the master at complete global checkpoint
// target (0: the start; normally the newest, older when the newest proved
// damaged) and bumps the epoch.
func (r *recovery) rollback(ctx context.Context, why string, target int64) error {
	r.core.Pause()
	var g coord.GlobalCheckpoint
	if _, err := coord.GetJSON(ctx, r.cli, coord.GlobalCheckpointKey(r.job), &g); err != nil && !errors.Is(err, coord.ErrNotFound) {
		return err
	}
	if !g.Has(target) {
		return fmt.Errorf("master: rollback to step %d: not a complete global checkpoint (kept: %v)", target, g.Steps)
	}
	g.Step = target
	r.log.Warn("rolling back to a complete global checkpoint", "why", why, "step", g.Step)
	if err := r.ps.Refresh(ctx); err != nil {
		return err
	}
	if err := r.ps.Client().Restore(ctx, g.Step, r.core.Epoch()+1); err != nil {
		return err
	}
	var state *State
	if g.Step > 0 {
		snap, err := r.store.LoadStep(ctx, g.Step)
		if err != nil {
			return fmt.Errorf("master: rollback: %w", err)
		}
		state = &State{}
		if err := json.Unmarshal(snap.Meta, state); err != nil {
			return fmt.Errorf("master: rollback: decode checkpoint of step %d: %w", g.Step, err)
		}
	}
	if err := r.core.Rollback(ctx, state); err != nil {
		return err
	}
	pass, _ := r.core.Position()
	_ = coord.AppendEvent(ctx, r.cli, r.job, fmt.Sprintf("%s: job rolled back to global checkpoint step %d (pass %d)", why, g.Step, pass))
	return nil
}
