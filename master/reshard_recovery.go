package master

import (
	"context"
	"encoding/json"

	"github.com/gtrain/gtrain/coord"
	"github.com/gtrain/gtrain/jobspec"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// countMarks counts the participants of the current layout that marked
// step: the master and pserver-0..pservers-1. After a re-shard down, an old
// pserver beyond the new count may still mark a step it applied before it
// left its generation; its mark must not complete a step of the new cut.
func (r *recovery) countMarks(ctx context.Context, step int64, pservers int) (int64, error) {
	resp, err := r.cli.Get(ctx, coord.CheckpointMarkStepPrefix(r.job, step), clientv3.WithPrefix(), clientv3.WithKeysOnly())
	if err != nil {
		return 0, err
	}
	var n int64
	for _, kv := range resp.Kvs {
		_, who, ok := coord.ParseCheckpointMarkKey(r.job, string(kv.Key))
		if !ok {
			continue
		}
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

// knownIncarnation reports whether lease is the incarnation of pserver index
// already seen ready, and records it as seen.
func (r *recovery) knownIncarnation(index int, lease int64) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.leases[index] == lease {
		return true
	}
	r.leases[index] = lease
	return false
}

// adoptIncarnationsLocked records the pservers registered now (of the
// layout in use) as seen: a re-shard's own rollback already put them at its
// step, so their registrations must not roll the job back once more.
func (r *recovery) adoptIncarnationsLocked(ctx context.Context) error {
	resp, err := r.cli.Get(ctx, coord.PserverPrefix(r.job), clientv3.WithPrefix())
	if err != nil {
		return err
	}
	gen := r.ps.Generation()
	for _, kv := range resp.Kvs {
		var rec coord.PserverRecord
		if json.Unmarshal(kv.Value, &rec) == nil && rec.Ready && rec.Generation == gen {
			r.leases[rec.Index] = kv.Lease
		}
	}
	return nil
}
