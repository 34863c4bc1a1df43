package coord

import (
	"context"
	"testing"

	"github.com/gtrain/gtrain/coord/schema"
)

// A mark records its file's sha256; a mark without one (the bare file
// name marks used to hold) or no mark records nothing, so a restore loads
// no file on its strength.
func TestCheckpointMarkRecords(t *testing.T) {
	cli := dialTest(t)
	ctx := context.Background()
	job := "mark-records"
	mark := schema.CheckpointMark{File: "f-step-20.ckpt", SHA256: "ab12"}
	if _, err := cli.Txn(ctx).Then(PutCheckpointMarkOp(PserverCheckpointMarkKey(job, 20, 1), mark)).Commit(); err != nil {
		t.Fatal(err)
	}
	if _, err := cli.Put(ctx, PserverCheckpointMarkKey(job, 10, 1), "f-step-10.ckpt"); err != nil {
		t.Fatal(err)
	}
	records := CheckpointMarkRecords(cli, job, "pserver-1")
	if sha, found, err := records(ctx, 20); err != nil || !found || sha != mark.SHA256 {
		t.Fatalf("step 20: %q, %v, %v; want %q", sha, found, err, mark.SHA256)
	}
	for _, step := range []int64{10, 30} {
		if sha, found, err := records(ctx, step); err != nil || found {
			t.Fatalf("step %d: %q, %v, %v; want no record", step, sha, found, err)
		}
	}
	if _, found, _ := CheckpointMarkRecords(cli, job, "pserver-0")(ctx, 20); found {
		t.Fatal("pserver-1's mark recorded pserver-0's checkpoint")
	}
}
