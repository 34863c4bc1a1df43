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
	Record schema.JobRecord
	State  schema.StateRecord
	Global schema.GlobalCheckpoint // zero: none declared (or async mode)
}

// ReopenJob moves a job that ended back to PENDING so that its roles run
// again (gctl job resume): the one write that leaves a terminal state. In
// one transaction, compare-and-swap on the job's record, state and global
// checkpoint as read, it writes the state, the record as decide
// left it (passes or learning rate changed) and deletes the job's worker
// records: a role that exited with its job must start again, with a fresh
// crash budget. Everything else stays, above all the master's state and the
// checkpoints a successor resumes from. decide sees what was read and may
// edit the record; its error leaves the job as it was and is returned as is.
func ReopenJob(ctx context.Context, cli *clientv3.Client, job string, decide func(*Reopened) error) (Reopened, error) {
	keys := []string{JobKey(job), StateKey(job), GlobalCheckpointKey(job)}
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
		for i, into := range []any{&r.Record, &r.State, &r.Global} {
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
		state := schema.StateRecord{State: api.StatePending, Updated: time.Now().UTC()}
		txn, err := cli.Txn(ctx).If(cmps...).Then(
			clientv3.OpPut(keys[0], MustJSON(r.Record)),
			clientv3.OpPut(keys[1], MustJSON(state)),
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
