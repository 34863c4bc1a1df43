package recovery

import (
	"context"
	"fmt"

	"github.com/gtrain/gtrain/coord"
	"github.com/gtrain/gtrain/jobspec"
)

// countMarks counts the participants of the current layout that marked
// step: the master and pserver-0..pservers-1. After a re-shard down, an old
// pserver beyond the new count may still mark a step it applied before it
// left its generation; its mark must not complete a step of the new cut.
func (r *Recovery) countMarks(ctx context.Context, step int64, pservers int) (int64, error) {
	marked, err := r.checkpoints.Marks(ctx, step)
	if err != nil {
		return 0, err
	}
	var n int64
	for _, who := range marked {
		if who == coord.MasterMark {
			n++
			continue
		}
		if role, i, err := jobspec.ParseWorker(who); err == nil && role == jobspec.RolePserver && i < pservers {
			n++
		}
	}
	return n, nil
}

// knownIncarnation reports whether reg is not news: the
// incarnation of its index already seen ready, or a registration of another
// layout generation than the one in use. The watch may deliver an old
// generation's last publish (a checkpoint mark) after a re-shard adopted the
// new one: taken for a restart, it would roll the job back to where that
// old incarnation once started. Otherwise the lease is recorded as seen.
func (r *Recovery) knownIncarnation(reg Registration) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if reg.Generation != r.ps.Generation() || r.leases[reg.Index] == reg.Lease {
		return true
	}
	r.leases[reg.Index] = reg.Lease
	return false
}

// adoptIncarnationsLocked records the pservers registered now (of the
// layout in use) as seen: a re-shard's own rollback already put them at its
// step, so their registrations must not roll the job back once more.
func (r *Recovery) adoptIncarnationsLocked(ctx context.Context) error {
	regs, _, err := r.ps.Registrations(ctx)
	if err != nil {
		return err
	}
	gen := r.ps.Generation()
	for _, reg := range regs {
		if reg.Ready && reg.Generation == gen {
			r.leases[reg.Index] = reg.Lease
		}
	}
	return nil
}

// rollbackIfResharding (at start) rolls back to the newest global
// checkpoint, in a new epoch, when a predecessor died during a re-shard it
// had committed. The pservers and this master may well agree on a step
// (the re-cut one), but the trainers may still hold reports of the step
// after it, whose pushes went to the old layout and were lost with it: in
// the same epoch this master would take them and wait forever for pservers
// that never applied that step. The newest global checkpoint is the
// layout's first step or a later one of the new layout (the commit kept no
// older one).
func (r *Recovery) rollbackIfResharding(ctx context.Context) error {
	l, err := r.layouts.Layout(ctx)
	if err != nil || !l.Resharding() {
		return err
	}
	return r.rollback(ctx, fmt.Sprintf("a re-shard to %d pservers (layout generation %d) was under way when the master changed", l.Pservers, l.Generation), -1)
}
