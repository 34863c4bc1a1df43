package master

import (
	"context"
	"errors"
	"testing"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// dyingCommitter passes commits through until it has made `left` of them,
// then fails every one: a master that dies in the middle of a save.
type dyingCommitter struct {
	inner Committer
	left  int
}

var errDied = errors.New("master died")

func (d *dyingCommitter) Commit(ctx context.Context, ops ...clientv3.Op) error {
	if d.left == 0 {
		return errDied
	}
	d.left--
	return d.inner.Commit(ctx, ops...)
}

// TestEtcdStoreFullRewriteIsAtomic: a full rewrite (new pass, rollback) of
// more tasks than one transaction holds, cut off after its first commit,
// leaves the previous state whole — Meta still names the old copy.
func TestEtcdStoreFullRewriteIsAtomic(t *testing.T) {
	cli := dialTest(t, startTestEtcd(t))
	ctx := context.Background()
	_, lead := leadJob(t, cli, "torn", "m")
	const n = 300 // two blocks
	before := storeStatuses(n, 1)
	meta := storeMeta(40)
	meta.Slot = 1
	if err := NewEtcdStore(cli, lead, "torn").Save(ctx, meta, before, nil); err != nil {
		t.Fatal(err)
	}
	next := meta
	next.Pass, next.Step, next.Slot = 3, 50, 0 // the Core flips the slot for a full rewrite
	dying := NewEtcdStore(cli, &dyingCommitter{inner: lead, left: 1}, "torn")
	dying.maxOps = 2 // the two blocks in one commit, Meta in the next
	if err := dying.Save(ctx, next, storeStatuses(n, 2), nil); !errors.Is(err, errDied) {
		t.Fatalf("save through a dying committer: %v", err)
	}
	got, sts, err := NewEtcdStore(cli, lead, "torn").Load(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got.Pass != meta.Pass || got.Step != meta.Step || got.Slot != meta.Slot {
		t.Fatalf("meta after a torn rewrite: pass %d step %d slot %d, want the old %d %d %d", got.Pass, got.Step, got.Slot, meta.Pass, meta.Step, meta.Slot)
	}
	if len(sts) != n {
		t.Fatalf("%d statuses loaded, want %d", len(sts), n)
	}
	for i := range sts {
		if !sameStatus(sts[i], before[i]) {
			t.Fatalf("task %d after a torn rewrite: %+v, want the old %+v", i, sts[i], before[i])
		}
	}
}
