package checkpoint

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/gtrain/gtrain/internal/testing/etcdtest"
)

// startEtcd returns a client of the package's embedded etcd, empty for this
// test.
func startEtcd(t *testing.T) *clientv3.Client {
	t.Helper()
	return etcdtest.Dial(t, etcdtest.Fresh(t).Endpoint)
}

func TestEtcdRecorder(t *testing.T) {
	cli := startEtcd(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for _, tc := range []struct {
		name string
		test func(t *testing.T, ctx context.Context, cli *clientv3.Client)
	}{
		{"contract", func(t *testing.T, _ context.Context, cli *clientv3.Client) {
			recorderContract(t, NewEtcdRecorder(cli, under("/gtrain/jobs/a/checkpoints")))
		}},
		{"stores JSON at prefix/index with ModRevision as version", testEtcdRecorderStoresJSON},
		{"CAS conflict with a concurrent writer", testEtcdRecorderConflict},
		{"failing guard is a conflict", testEtcdRecorderGuard},
		{"garbage record is ErrCorrupt", testEtcdRecorderCorrupt},
		{"store over etcd saves, loads and fences", testStoreOverEtcd},
	} {
		t.Run(tc.name, func(t *testing.T) { tc.test(t, ctx, cli) })
	}
}

func testEtcdRecorderStoresJSON(t *testing.T, ctx context.Context, cli *clientv3.Client) {
	r := NewEtcdRecorder(cli, under("/gtrain/jobs/b/checkpoints"))
	rec := Record{Index: 2, Step: 77, File: pserverFile(2, 77), SHA256: strings.Repeat("ab", 32)}
	v, err := r.CompareAndSwap(ctx, rec, 0)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := cli.Get(ctx, "/gtrain/jobs/b/checkpoints/2")
	if err != nil || len(resp.Kvs) != 1 {
		t.Fatalf("raw get: %v, %d kvs", err, len(resp.Kvs))
	}
	var stored Record
	if err := json.Unmarshal(resp.Kvs[0].Value, &stored); err != nil || stored != rec {
		t.Fatalf("stored %s (%v), want %+v", resp.Kvs[0].Value, err, rec)
	}
	if resp.Kvs[0].ModRevision != v {
		t.Fatalf("version %d, ModRevision %d", v, resp.Kvs[0].ModRevision)
	}
}

func testEtcdRecorderConflict(t *testing.T, ctx context.Context, cli *clientv3.Client) {
	a := NewEtcdRecorder(cli, under("/gtrain/jobs/c/checkpoints"))
	b := NewEtcdRecorder(cli, under("/gtrain/jobs/c/checkpoints"))
	v0, err := a.CompareAndSwap(ctx, Record{Index: 0, Step: 1}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.CompareAndSwap(ctx, Record{Index: 0, Step: 2}, v0); err != nil {
		t.Fatal(err)
	}
	_, err = a.CompareAndSwap(ctx, Record{Index: 0, Step: 3}, v0)
	if !errors.Is(err, ErrConflict) || !strings.Contains(err.Error(), fmt.Sprintf("expected %d", v0)) {
		t.Fatalf("err = %v, want ErrConflict naming version %d", err, v0)
	}
	if rec, _, _, _ := a.Load(ctx, 0); rec.Step != 2 {
		t.Fatalf("record step %d after conflict, want 2", rec.Step)
	}
}

func testEtcdRecorderGuard(t *testing.T, ctx context.Context, cli *clientv3.Client) {
	const fence = "/gtrain/jobs/d/pserver-0-owner"
	r := NewEtcdRecorder(cli, under("/gtrain/jobs/d/checkpoints"))
	r.Guard = []clientv3.Cmp{clientv3.Compare(clientv3.Value(fence), "=", "me")}
	if _, err := cli.Put(ctx, fence, "someone-else"); err != nil {
		t.Fatal(err)
	}
	_, err := r.CompareAndSwap(ctx, Record{Index: 0, Step: 1}, 0)
	if !errors.Is(err, ErrConflict) || !strings.Contains(err.Error(), "guard") {
		t.Fatalf("err = %v, want ErrConflict naming the guard", err)
	}
	if _, err := cli.Put(ctx, fence, "me"); err != nil {
		t.Fatal(err)
	}
	if _, err := r.CompareAndSwap(ctx, Record{Index: 0, Step: 1}, 0); err != nil {
		t.Fatalf("guard holds, CAS failed: %v", err)
	}
}

func testEtcdRecorderCorrupt(t *testing.T, ctx context.Context, cli *clientv3.Client) {
	r := NewEtcdRecorder(cli, under("/gtrain/jobs/e/checkpoints"))
	if _, err := cli.Put(ctx, r.Key(0), "{not json"); err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := r.Load(ctx, 0); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("err = %v, want ErrCorrupt", err)
	}
}

func testStoreOverEtcd(t *testing.T, ctx context.Context, cli *clientv3.Client) {
	dir, r := t.TempDir(), NewEtcdRecorder(cli, under("/gtrain/jobs/f/checkpoints"))
	a, b := newTestStore(t, dir, r, 2), newTestStore(t, dir, r, 2)
	if _, _, err := a.Load(ctx); !errors.Is(err, ErrNoCheckpoint) {
		t.Fatalf("first Load: %v", err)
	}
	if _, _, err := b.Load(ctx); !errors.Is(err, ErrNoCheckpoint) {
		t.Fatalf("first Load: %v", err)
	}
	mustSave(t, a, 1)
	saved := mustSave(t, a, 2)
	if _, err := b.Save(ctx, testSnapshot(0, 3)); !errors.Is(err, ErrConflict) {
		t.Fatalf("stale store Save: err = %v, want ErrConflict", err)
	}
	snap, report, err := newTestStore(t, dir, r, 2).Load(ctx)
	if err != nil || report.Loaded != saved {
		t.Fatalf("Load: report %+v err %v", report, err)
	}
	assertSameSnapshot(t, testSnapshot(0, 2), snap)
}

// under lays a test's records out as prefix/index.
func under(prefix string) func(int) string {
	return func(index int) string { return prefix + "/" + strconv.Itoa(index) }
}
