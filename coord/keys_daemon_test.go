package coord

import (
	"fmt"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
)

func TestParseJobKey(t *testing.T) {
	const job = "mnist-1"
	at := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	tests := []struct {
		key  string
		want JobKeyParts
	}{
		{JobKey(job), JobKeyParts{job, JobKeyRecord, ""}},
		{StateKey(job), JobKeyParts{job, JobKeyState, ""}},
		{ProgressKey(job), JobKeyParts{job, JobKeyProgress, ""}},
		{WorkerKey(job, "trainer-3"), JobKeyParts{job, JobKeyWorker, "trainer-3"}},
		{PserverKey(job, 2), JobKeyParts{job, JobKeyPserver, "2"}},
		{TrainerKey(job, 17), JobKeyParts{job, JobKeyTrainer, "17"}},
		{EventKey(job, at, "ab12"), JobKeyParts{job, JobKeyEvent, fmt.Sprintf("%020d-ab12", at.UnixNano())}},
		{PlacementKey(job), JobKeyParts{job, JobKeyPlacement, ""}},
		{StorageKey(job, "n1.example"), JobKeyParts{job, JobKeyStorage, "n1.example"}},
		{StoragePrefix(job), JobKeyParts{job, JobKeyOther, ""}},
		{MasterMetaKey(job), JobKeyParts{job, JobKeyOther, ""}},
		{MasterHolderKey(job), JobKeyParts{job, JobKeyOther, ""}},
		{GlobalCheckpointKey(job), JobKeyParts{job, JobKeyOther, ""}},
		{CheckpointMarkKey(job, 42, "master"), JobKeyParts{job, JobKeyOther, ""}},
		{WorkerPrefix(job), JobKeyParts{job, JobKeyOther, ""}},
		{WorkerKey(job, "a/b"), JobKeyParts{job, JobKeyOther, ""}},
		{JobPrefix(job) + "records", JobKeyParts{job, JobKeyOther, ""}},
	}
	for _, tt := range tests {
		got, ok := ParseJobKey(tt.key)
		if !ok || got != tt.want {
			t.Errorf("ParseJobKey(%q) = %+v, %v; want %+v, true", tt.key, got, ok, tt.want)
		}
	}
	for _, key := range []string{NodeKey("n1"), NodeInfoKey("n1"), DrainKey("n1"), TaskKey(job, 0, 3), JobsPrefix(), ""} {
		if got, ok := ParseJobKey(key); ok {
			t.Errorf("ParseJobKey(%q) = %+v, true; want ok=false", key, got)
		}
	}
}

func TestEventKeySortsByTime(t *testing.T) {
	early := time.Date(2026, 1, 1, 0, 0, 0, 999, time.UTC)
	late := early.Add(time.Nanosecond)
	if a, b := EventKey("j", early, "ffff"), EventKey("j", late, "0000"); a >= b {
		t.Errorf("EventKey at %v = %q sorts after EventKey at %v = %q", early, a, late, b)
	}
}

// PurgeJobOps removes every key of the job, and none of a job whose name
// extends it.
func TestPurgeJobOps(t *testing.T) {
	cli := dialTest(t)
	ctx := t.Context()
	job := uniqueJob(t)
	other := job + "x"
	for _, j := range []string{job, other} {
		for _, key := range []string{JobKey(j), StateKey(j), WorkerKey(j, "master"), TaskKey(j, 0, 1), TaskKey(j, 1, 1)} {
			if _, err := cli.Put(ctx, key, "{}"); err != nil {
				t.Fatal(err)
			}
		}
	}
	if _, err := cli.Txn(ctx).Then(PurgeJobOps(job)...).Commit(); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		prefix string
		want   int64
	}{{JobPrefix(job), 0}, {TaskPrefix(job), 0}, {JobPrefix(other), 3}, {TaskPrefix(other), 2}} {
		resp, err := cli.Get(ctx, c.prefix, clientv3.WithPrefix(), clientv3.WithCountOnly())
		if err != nil {
			t.Fatal(err)
		}
		if resp.Count != c.want {
			t.Errorf("%d keys left under %s, want %d", resp.Count, c.prefix, c.want)
		}
	}
}
