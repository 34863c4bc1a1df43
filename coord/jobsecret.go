package coord

import (
	"context"
	"errors"
	"fmt"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/gtrain/gtrain/coord/schema"
)

// JobSecretsPrefix holds the jobs' data-plane secrets, one key per job,
// outside the job's prefix: status, `job list` and the agents' watches read
// that prefix and must never carry a secret.
func JobSecretsPrefix() string { return Root + "jobsecrets/" }

// JobSecretKey is the key of job's data-plane secret.
func JobSecretKey(job string) string { return JobSecretsPrefix() + job }

// ErrJobGone means the job record a secret was asked for no longer exists
// at that create revision (purged, or replaced by a job of the same name).
var ErrJobGone = errors.New("the job record is gone or was replaced")

// EnsureJobSecret returns the data-plane secret of the job whose record
// has create revision jobRev, making it with fresh when the job has none
// yet. Every agent that starts a role of the job asks; the first one's
// secret wins (a transaction creates the key only if absent, and only
// while the record is still at jobRev, so a purged job's runner cannot
// leave a key behind).
func EnsureJobSecret(ctx context.Context, cli *clientv3.Client, job string, jobRev int64, fresh func() ([]byte, error)) ([]byte, error) {
	for range 2 { // a lost race to create it is read back on the second round
		secret, rev, err := GetJobSecret(ctx, cli, job, jobRev)
		if err != nil || secret != nil {
			return secret, err
		}
		if secret, err = fresh(); err != nil {
			return nil, err
		}
		key := JobSecretKey(job)
		resp, err := cli.Txn(ctx).
			If(clientv3.Compare(clientv3.CreateRevision(JobKey(job)), "=", jobRev),
				clientv3.Compare(clientv3.ModRevision(key), "=", rev)).
			Then(clientv3.OpPut(key, MustJSON(schema.JobSecretRecord{JobRev: jobRev, Secret: secret}))).
			Commit()
		if err != nil {
			return nil, fmt.Errorf("store the secret of job %s: %w", job, err)
		}
		if resp.Succeeded {
			return secret, nil
		}
	}
	return nil, fmt.Errorf("secret of job %s (revision %d): %w", job, jobRev, ErrJobGone)
}

// GetJobSecret reads the data-plane secret of the job whose record has
// create revision jobRev: nil (and the key's mod revision, 0 when absent)
// when it has none yet or the stored one is another revision's.
func GetJobSecret(ctx context.Context, kv clientv3.KV, job string, jobRev int64) ([]byte, int64, error) {
	var rec schema.JobSecretRecord
	rev, err := GetJSON(ctx, kv, JobSecretKey(job), &rec)
	switch {
	case errors.Is(err, ErrNotFound):
		return nil, 0, nil
	case err != nil:
		return nil, 0, fmt.Errorf("read the secret of job %s: %w", job, err)
	case rec.JobRev != jobRev || len(rec.Secret) == 0:
		return nil, rev, nil
	}
	return rec.Secret, rev, nil
}
