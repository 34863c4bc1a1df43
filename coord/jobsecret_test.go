package coord

import (
	"bytes"
	"errors"
	"testing"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// EnsureJobSecret makes a job's secret once, returns the same one to every
// later caller, refuses a job revision that is not the record's, and
// PurgeJobOps removes it with the job.
func TestEnsureJobSecret(t *testing.T) {
	cli := dialTest(t)
	ctx := t.Context()
	job := uniqueJob(t)
	resp, err := cli.Put(ctx, JobKey(job), "{}")
	if err != nil {
		t.Fatal(err)
	}
	rev := resp.Header.Revision
	made := 0
	fresh := func() ([]byte, error) { made++; return []byte{byte(made), 2, 3}, nil }
	first, err := EnsureJobSecret(ctx, cli, job, rev, fresh)
	if err != nil {
		t.Fatal(err)
	}
	again, err := EnsureJobSecret(ctx, cli, job, rev, fresh)
	if err != nil || !bytes.Equal(first, again) || made != 1 {
		t.Errorf("second EnsureJobSecret: %x, %v after %d made; want %x, made once", again, err, made, first)
	}
	if _, err := EnsureJobSecret(ctx, cli, job, rev+1, fresh); !errors.Is(err, ErrJobGone) {
		t.Errorf("EnsureJobSecret for another revision of the record: %v, want ErrJobGone", err)
	}
	if _, err := cli.Txn(ctx).Then(PurgeJobOps(job)...).Commit(); err != nil {
		t.Fatal(err)
	}
	if got, err := cli.Get(ctx, JobSecretKey(job), clientv3.WithCountOnly()); err != nil || got.Count != 0 {
		t.Errorf("after the purge, the secret key: %v, %v; want it gone", got, err)
	}
	if _, err := EnsureJobSecret(ctx, cli, job, rev, fresh); !errors.Is(err, ErrJobGone) {
		t.Errorf("EnsureJobSecret for a purged job: %v, want ErrJobGone", err)
	}
}
