package master

import (
	"testing"

	"github.com/gtrain/gtrain/coord"
	"github.com/gtrain/gtrain/coord/schema"
	"github.com/gtrain/gtrain/internal/testing/etcdtest"
)

// TestEtcdStoreLoadsAfterCompaction: a master state last written before
// etcd compacted its history (a job idle for longer than the retention)
// still loads whole.
func TestEtcdStoreLoadsAfterCompaction(t *testing.T) {
	cli := dialTest(t, etcdtest.Start(t).Endpoint) // compaction is cluster-wide
	_, lead := leadJob(t, cli, "idle", "m")
	want := storeStatuses(600, 1)
	meta := storeMeta(9)
	meta.Slot = 1
	if err := NewEtcdStore(cli, lead, "idle").Save(t.Context(), meta, want, nil); err != nil {
		t.Fatal(err)
	}
	var rev int64
	for range 5 { // later writes of other keys, then compaction up to them
		if err := coord.PutJSON(t.Context(), cli, coord.StateKey("other"), schema.StateRecord{}); err != nil {
			t.Fatal(err)
		}
		resp, err := cli.Get(t.Context(), coord.StateKey("other"))
		if err != nil {
			t.Fatal(err)
		}
		rev = resp.Header.Revision
	}
	if _, err := cli.Compact(t.Context(), rev); err != nil {
		t.Fatal(err)
	}
	got, sts, err := NewEtcdStore(cli, lead, "idle").Load(t.Context())
	if err != nil {
		t.Fatalf("load after compaction: %v", err)
	}
	if got.Step != meta.Step || len(sts) != len(want) {
		t.Fatalf("loaded step %d with %d tasks, want %d with %d", got.Step, len(sts), meta.Step, len(want))
	}
	for i := range want {
		if !sameStatus(sts[i], want[i]) {
			t.Fatalf("task %d = %+v, want %+v", i, sts[i], want[i])
		}
	}
}
