package coord

import (
	"context"
	"errors"

	"github.com/gtrain/gtrain/coord/schema"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// KeptGlobalSteps returns the steps of job's kept complete global
// checkpoints (none before the first, or in async mode): the steps whose
// files no participant may prune.
func KeptGlobalSteps(ctx context.Context, kv clientv3.KV, job string) ([]int64, error) {
	var g schema.GlobalCheckpoint
	if _, err := GetJSON(ctx, kv, GlobalCheckpointKey(job), &g); err != nil {
		if errors.Is(err, ErrNotFound) {
			return nil, nil
		}
		return nil, err
	}
	return g.Steps, nil
}

// PserverCheckpointSteps is, for pserver indexes 0..n-1 of job, the step of
// its newest checkpoint record (an async job's restart point), -1 where it
// has none.
func PserverCheckpointSteps(ctx context.Context, kv clientv3.KV, job string, n int) ([]int64, error) {
	steps := make([]int64, n)
	for i := range steps {
		var rec struct {
			Step int64 `json:"step"`
		}
		_, err := GetJSON(ctx, kv, CheckpointRecordKey(job, i), &rec)
		switch {
		case errors.Is(err, ErrNotFound):
			steps[i] = -1
		case err != nil:
			return nil, err
		default:
			steps[i] = rec.Step
		}
	}
	return steps, nil
}
