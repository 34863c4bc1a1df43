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
