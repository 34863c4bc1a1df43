package coord

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/gtrain/gtrain/coord/schema"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// ErrNoJob reports a job without a record.
var ErrNoJob = errors.New("job has no record")

// SetTrainerCount sets the desired trainer count in the job's record (the
// spec's trainers, which the scheduler places), compare-and-swap on the
// record, and returns the count it replaced. check sees the record first
// and may refuse the change.
func SetTrainerCount(ctx context.Context, cli *clientv3.Client, job string, n int, check func(*schema.JobRecord) error) (prev int, err error) {
	key := JobKey(job)
	for range 10 {
		resp, err := cli.Get(ctx, key)
		if err != nil {
			return 0, fmt.Errorf("read job %s: %w", job, err)
		}
		if len(resp.Kvs) == 0 {
			return 0, fmt.Errorf("job %s: %w", job, ErrNoJob)
		}
		var rec schema.JobRecord
		if err := json.Unmarshal(resp.Kvs[0].Value, &rec); err != nil {
			return 0, fmt.Errorf("job %s: decode record: %w", job, err)
		}
		if err := check(&rec); err != nil {
			return 0, err
		}
		prev = rec.Spec.Trainers
		if prev == n {
			return prev, nil
		}
		rec.Spec.Trainers = n
		txn, err := cli.Txn(ctx).
			If(clientv3.Compare(clientv3.ModRevision(key), "=", resp.Kvs[0].ModRevision)).
			Then(clientv3.OpPut(key, MustJSON(rec))).Commit()
		if err != nil {
			return 0, fmt.Errorf("write job %s: %w", job, err)
		}
		if txn.Succeeded {
			return prev, nil
		}
	}
	return 0, fmt.Errorf("job %s: its record kept changing; try again", job)
}
