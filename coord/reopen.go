package coord

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/gtrain/gtrain/api"
	"github.com/gtrain/gtrain/coord/schema"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// Reopened is what ReopenJob read of a job, for its caller to decide on.
type Reopened struct {
	Record    schema.JobRecord
	State     schema.StateRecord
	Global    schema.GlobalCheckpoint // zero: none declared (or async mode)
	Placement schema.PlacementRecord
}

// ReopenJob moves a job that ended back to PENDING so that its roles run
// again (gctl job resume): the one write that leaves a terminal state. In
// one transaction, compare-and-swap on the job's record, state and global
// checkpoint as read, it writes the state, the record as decide
// left it (passes or learning rate changed) and deletes the job's worker
// records: a role that exited with its job must start again, with a fresh
// crash budget. It unplaces the job's workers: while the job had ended,
// other jobs may have taken its room, GPUs and its owner's quota, so it is
// placed anew, as a new job is (Home keeps a job without checkpoint.dir to
// the node whose disk holds its checkpoints). Everything else stays, above
// all the master's state and the checkpoints a successor resumes from.
// decide sees what was read and may edit the record; its error leaves the
// job as it was and is returned as is.
func ReopenJob(ctx context.Context, cli *clientv3.Client, job string, decide func(*Reopened) error) (Reopened, error) {
	keys := []string{JobKey(job), StateKey(job), GlobalCheckpointKey(job), PlacementKey(job)}
	for range 10 {
		var gets []clientv3.Op
		for _, k := range keys {
			gets = append(gets, clientv3.OpGet(k))
		}
		resp, err := cli.Txn(ctx).Then(gets...).Commit()
		if err != nil {
			return Reopened{}, fmt.Errorf("read job %s: %w", job, err)
		}
		var r Reopened
		cmps := make([]clientv3.Cmp, len(keys))
		for i, into := range []any{&r.Record, &r.State, &r.Global, &r.Placement} {
			kvs := resp.Responses[i].GetResponseRange().Kvs
			var rev int64
			switch {
			case len(kvs) > 0:
				rev = kvs[0].ModRevision
				if err := json.Unmarshal(kvs[0].Value, into); err != nil {
					return Reopened{}, fmt.Errorf("decode %s: %w", keys[i], err)
				}
			case i == 0:
				return Reopened{}, fmt.Errorf("job %s: %w", job, ErrNoJob)
			}
			cmps[i] = clientv3.Compare(clientv3.ModRevision(keys[i]), "=", rev)
		}
		if err := decide(&r); err != nil {
			return r, err
		}
		// No reason: a PENDING job's reason is the scheduler's (what it waits for).
		now := time.Now().UTC()
		state := schema.StateRecord{State: api.StatePending, Updated: now}
		txn, err := cli.Txn(ctx).If(cmps...).Then(
			clientv3.OpPut(keys[0], MustJSON(r.Record)),
			clientv3.OpPut(keys[1], MustJSON(state)),
			clientv3.OpPut(keys[3], MustJSON(unplaced(r.Placement, r.Record.Spec.Checkpoint.Dir == "", now))),
			clientv3.OpDelete(WorkerPrefix(job), clientv3.WithPrefix()),
		).Commit()
		if err != nil {
			return Reopened{}, fmt.Errorf("resume job %s: %w", job, err)
		}
		if txn.Succeeded {
			return r, nil
		}
	}
	return Reopened{}, fmt.Errorf("job %s: its records kept changing; try again", job)
}

// unplaced is placement p with no worker placed, its next generation. A
// job without checkpoint.dir (oneNode) keeps the node its workers ran on
// as Home.
func unplaced(p schema.PlacementRecord, oneNode bool, now time.Time) schema.PlacementRecord {
	home := p.Home
	for _, a := range p.Workers {
		home = a.Node
	}
	if !oneNode {
		home = ""
	}
	p.Gen, p.Workers, p.Yield, p.Reason, p.Home, p.Updated = p.Gen+1, map[string]schema.Assignment{}, nil, "", home, now
	return p
}
