package coord

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/gtrain/gtrain/coord/schema"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// ErrJobReplaced means the job's record is not the one a process was started
// for: the job was purged and (maybe) submitted again under the same name.
var ErrJobReplaced = errors.New("job record replaced")

// GetJobRecord reads job's record and the revision the record was created
// at. That revision is the job's identity: it is the same for the job's
// whole life, and a purge followed by a new job of the same name changes it
// (the agent's runners fence their writes on it; checkpoint files carry it).
func GetJobRecord(ctx context.Context, kv clientv3.KV, job string) (schema.JobRecord, int64, error) {
	key := JobKey(job)
	resp, err := kv.Get(ctx, key)
	if err != nil {
		return schema.JobRecord{}, 0, fmt.Errorf("etcd get %s: %w", key, err)
	}
	if len(resp.Kvs) == 0 {
		return schema.JobRecord{}, 0, fmt.Errorf("%s: %w", key, ErrNotFound)
	}
	var rec schema.JobRecord
	if err := json.Unmarshal(resp.Kvs[0].Value, &rec); err != nil {
		return schema.JobRecord{}, 0, fmt.Errorf("decode %s: %w", key, err)
	}
	return rec, resp.Kvs[0].CreateRevision, nil
}

// CheckJobRev returns ErrJobReplaced, naming both revisions, when want (the
// revision a process was started for; 0: any) is not got (the record's).
func CheckJobRev(job string, want, got int64) error {
	if want != 0 && want != got {
		return fmt.Errorf("%w: job %s was started at record revision %d, its record now has revision %d (purged and submitted again)",
			ErrJobReplaced, job, want, got)
	}
	return nil
}
