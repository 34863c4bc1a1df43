package coord

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/gtrain/gtrain/coord/schema"
	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// Re-sharding pservers (`gctl job scale NAME --pservers M`, sync jobs) uses
// two keys: the operator's request, which the daemon writes, and the layout
// generation, which only the master writes (fenced on its leadership)
// together with the job record's pserver count, in one transaction.

// ReshardRequestKey holds the pserver count an operator asked for.
func ReshardRequestKey(job string) string { return JobPrefix(job) + "reshard/request" }

// LayoutKey holds the job's current schema.LayoutRecord (absent: never re-sharded,
// the spec's pserver count at generation 0).
func LayoutKey(job string) string { return JobPrefix(job) + "reshard/layout" }

// SetReshardRequest records the pserver count an operator wants.
func SetReshardRequest(ctx context.Context, cli *clientv3.Client, job string, req schema.ReshardRequest) error {
	if _, err := cli.Put(ctx, ReshardRequestKey(job), MustJSON(req)); err != nil {
		return fmt.Errorf("job %s: record the pserver request: %w", job, err)
	}
	return nil
}

// GetReshard reads, at one revision, the request (zero: none) and the
// layout (zero: generation 0) of job.
func GetReshard(ctx context.Context, cli *clientv3.Client, job string) (schema.ReshardRequest, schema.LayoutRecord, error) {
	var req schema.ReshardRequest
	var layout schema.LayoutRecord
	resp, err := cli.Txn(ctx).Then(clientv3.OpGet(ReshardRequestKey(job)), clientv3.OpGet(LayoutKey(job))).Commit()
	if err != nil {
		return req, layout, fmt.Errorf("job %s: read the pserver layout: %w", job, err)
	}
	if kvs := resp.Responses[0].GetResponseRange().Kvs; len(kvs) > 0 {
		if err := json.Unmarshal(kvs[0].Value, &req); err != nil {
			return req, layout, fmt.Errorf("job %s: decode the pserver request: %w", job, err)
		}
	}
	if kvs := resp.Responses[1].GetResponseRange().Kvs; len(kvs) > 0 {
		if err := json.Unmarshal(kvs[0].Value, &layout); err != nil {
			return req, layout, fmt.Errorf("job %s: decode the pserver layout: %w", job, err)
		}
	}
	return req, layout, nil
}

// GetLayout reads job's layout generation (zero record: generation 0).
func GetLayout(ctx context.Context, cli *clientv3.Client, job string) (schema.LayoutRecord, error) {
	_, l, err := GetReshard(ctx, cli, job)
	return l, err
}

// NextLayout is the generation that re-cuts cur's parameters over pservers
// from global checkpoint step. A generation that starts where cur started
// (no step between) re-cuts what cur re-cut: cur wrote no file.
func NextLayout(cur schema.LayoutRecord, curPservers, pservers int, step int64, paused time.Time) schema.LayoutRecord {
	source := curPservers
	if cur.Generation > 0 && cur.FromStep == step {
		source = cur.SourcePservers
	}
	return schema.LayoutRecord{Generation: cur.Generation + 1, Pservers: pservers, FromStep: step, SourcePservers: source, Paused: paused}
}

// ErrLayoutMoved is returned by CommitLayout when the job record changed
// since it was read (read it again); a failed guard is ErrFenced.
var ErrLayoutMoved = errors.New("job record changed under the re-shard")

// CommitLayout makes next the job's layout: the layout record, the job
// record's pserver count and the global checkpoint (only next.FromStep is
// kept: no rollback may cross the generation), in one transaction guarded by
// guard (the master's leadership) and by the job record being unchanged.
// Marks of steps after FromStep are dropped: their files are of the old cut.
func CommitLayout(ctx context.Context, cli *clientv3.Client, guard clientv3.Cmp, job string, next schema.LayoutRecord, global schema.GlobalCheckpoint) error {
	key := JobKey(job)
	resp, err := cli.Get(ctx, key)
	if err != nil {
		return fmt.Errorf("read job %s: %w", job, err)
	}
	if len(resp.Kvs) == 0 {
		return fmt.Errorf("job %s: %w", job, ErrNoJob)
	}
	var rec schema.JobRecord
	if err := json.Unmarshal(resp.Kvs[0].Value, &rec); err != nil {
		return fmt.Errorf("job %s: decode record: %w", job, err)
	}
	rec.Spec.Pservers = next.Pservers
	global = schema.GlobalCheckpoint{Step: next.FromStep, Pass: global.Pass, Steps: []int64{next.FromStep}}
	inner := clientv3.OpTxn([]clientv3.Cmp{clientv3.Compare(clientv3.ModRevision(key), "=", resp.Kvs[0].ModRevision)},
		[]clientv3.Op{clientv3.OpPut(key, MustJSON(rec)), clientv3.OpPut(LayoutKey(job), MustJSON(next)),
			clientv3.OpPut(GlobalCheckpointKey(job), MustJSON(global)), DeleteMarksFrom(job, next.FromStep+1)}, nil)
	txn, err := cli.Txn(ctx).If(guard).Then(inner).Commit()
	if err != nil {
		return fmt.Errorf("job %s: commit layout generation %d: %w", job, next.Generation, err)
	}
	if !txn.Succeeded {
		return fmt.Errorf("job %s: layout generation %d: %w", job, next.Generation, ErrFenced)
	}
	if !txn.Responses[0].GetResponseTxn().Succeeded {
		return fmt.Errorf("job %s: layout generation %d: %w", job, next.Generation, ErrLayoutMoved)
	}
	return nil
}

// PutLayoutOp rewrites the layout record (the pause measured), for a
// fenced commit.
func PutLayoutOp(job string, l schema.LayoutRecord) clientv3.Op {
	return clientv3.OpPut(LayoutKey(job), MustJSON(l))
}

// WatchLayout closes its channel once job's layout generation is no longer
// gen (or ctx ends): a pserver of generation gen must then re-shard. It
// polls as well as watches, so a lost watch costs at most a few seconds.
func WatchLayout(ctx context.Context, cli *clientv3.Client, job string, gen int64) <-chan struct{} {
	moved := make(chan struct{})
	go func() {
		defer close(moved)
		waitForKey(ctx, cli, LayoutKey(job), func(kv *mvccpb.KeyValue) bool {
			var l schema.LayoutRecord
			return kv != nil && json.Unmarshal(kv.Value, &l) == nil && l.Generation != gen
		})
	}()
	return moved
}
