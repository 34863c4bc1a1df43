package coord

import (
	"errors"
	"strings"
	"testing"

	"github.com/gtrain/gtrain/coord/schema"
)

// The create revision survives updates of the record and changes when the
// job is purged and submitted again under the same name.
func TestGetJobRecordIdentity(t *testing.T) {
	cli := dialTest(t)
	ctx := t.Context()
	job := uniqueJob(t)
	if _, _, err := GetJobRecord(ctx, cli, job); !errors.Is(err, ErrNotFound) {
		t.Fatalf("absent record: %v, want ErrNotFound", err)
	}
	rec := schema.JobRecord{Placement: map[string]string{"master": "n1"}}
	if err := PutJSON(ctx, cli, JobKey(job), rec); err != nil {
		t.Fatal(err)
	}
	_, first, err := GetJobRecord(ctx, cli, job)
	if err != nil || first <= 0 {
		t.Fatalf("GetJobRecord = rev %d, %v", first, err)
	}
	rec.Placement["master"] = "n2"
	if err := PutJSON(ctx, cli, JobKey(job), rec); err != nil {
		t.Fatal(err)
	}
	got, rev, err := GetJobRecord(ctx, cli, job)
	if err != nil || rev != first || got.Placement["master"] != "n2" {
		t.Fatalf("after an update: rev %d (want %d), placement %v, %v", rev, first, got.Placement, err)
	}
	if _, err := cli.Txn(ctx).Then(PurgeJobOps(job)...).Commit(); err != nil {
		t.Fatal(err)
	}
	if err := PutJSON(ctx, cli, JobKey(job), rec); err != nil {
		t.Fatal(err)
	}
	if _, reused, err := GetJobRecord(ctx, cli, job); err != nil || reused <= first {
		t.Fatalf("after purge and resubmit: rev %d, want > %d (%v)", reused, first, err)
	}
}

func TestCheckJobRev(t *testing.T) {
	if err := CheckJobRev("fit", 0, 7); err != nil {
		t.Errorf("no expected revision: %v", err)
	}
	if err := CheckJobRev("fit", 7, 7); err != nil {
		t.Errorf("same revision: %v", err)
	}
	err := CheckJobRev("fit", 7, 9)
	if !errors.Is(err, ErrJobReplaced) || !strings.Contains(err.Error(), "revision 7") || !strings.Contains(err.Error(), "revision 9") {
		t.Errorf("other revision: %v, want ErrJobReplaced naming both", err)
	}
}
