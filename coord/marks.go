package coord

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/gtrain/gtrain/coord/schema"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// PutCheckpointMarkOp writes the mark at key (CheckpointMarkKey,
// PserverCheckpointMarkKey): a participant's checkpoint file of the step is
// durable, with this sha256 (the record a restore of the step checks).
func PutCheckpointMarkOp(key string, mark schema.CheckpointMark) clientv3.Op {
	return clientv3.OpPut(key, MustJSON(mark))
}

// CheckpointMarkSHA returns the sha256 who's mark of step records; found is
// false when there is no mark, or only one of the bare file names marks
// used to hold, which records no sha256.
func CheckpointMarkSHA(ctx context.Context, kv clientv3.KV, job string, step int64, who string) (sha string, found bool, err error) {
	key := CheckpointMarkKey(job, step, who)
	resp, err := kv.Get(ctx, key)
	if err != nil {
		return "", false, fmt.Errorf("etcd get %s: %w", key, err)
	}
	if len(resp.Kvs) == 0 {
		return "", false, nil
	}
	var mark schema.CheckpointMark
	if json.Unmarshal(resp.Kvs[0].Value, &mark) != nil || mark.SHA256 == "" {
		return "", false, nil
	}
	return mark.SHA256, true, nil
}

// CheckpointMarkRecords is checkpoint.Config.StepRecord for who's
// checkpoints of job: the sha256 its mark of each step records.
func CheckpointMarkRecords(kv clientv3.KV, job, who string) func(ctx context.Context, step int64) (string, bool, error) {
	return func(ctx context.Context, step int64) (string, bool, error) {
		return CheckpointMarkSHA(ctx, kv, job, step, who)
	}
}
