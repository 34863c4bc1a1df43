package coord

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/gtrain/gtrain/coord/schema"
	clientv3 "go.etcd.io/etcd/client/v3"
)

func TestPutGetJSONRoundTrip(t *testing.T) {
	cli := dialTest(t)
	ctx := t.Context()
	job := uniqueJob(t)
	key := WorkerKey(job, "trainer-0")
	want := schema.WorkerRecord{
		Name: "trainer-0", Node: "n1", PID: 1234, State: "running", Restarts: 2,
		Start:   time.Date(2024, 5, 6, 7, 8, 9, 10, time.UTC),
		Updated: time.Date(2024, 5, 6, 7, 9, 0, 0, time.UTC), ExitCode: -1,
	}
	if err := PutJSON(ctx, cli, key, want); err != nil {
		t.Fatal(err)
	}
	var got schema.WorkerRecord
	rev1, err := GetJSON(ctx, cli, key, &got)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("round trip: got %+v, want %+v", got, want)
	}
	if rev1 <= 0 {
		t.Errorf("GetJSON revision = %d, want > 0", rev1)
	}

	want.Restarts = 3
	if err := PutJSON(ctx, cli, key, want); err != nil {
		t.Fatal(err)
	}
	rev2, err := GetJSON(ctx, cli, key, &got)
	if err != nil {
		t.Fatal(err)
	}
	if rev2 <= rev1 {
		t.Errorf("ModRevision after rewrite = %d, want > %d", rev2, rev1)
	}
	if got.Restarts != 3 {
		t.Errorf("Restarts after rewrite = %d, want 3", got.Restarts)
	}
}

func TestGetJSONMissingKeyIsNotFoundAndNamesKey(t *testing.T) {
	cli := dialTest(t)
	key := StateKey(uniqueJob(t))
	var st schema.StateRecord
	rev, err := GetJSON(t.Context(), cli, key, &st)
	if !errors.Is(err, ErrNotFound) {
		t.Fatalf("GetJSON of missing key: err = %v, want ErrNotFound", err)
	}
	if !strings.Contains(err.Error(), key) {
		t.Errorf("error %q does not name the key %q", err, key)
	}
	if rev != 0 {
		t.Errorf("revision of missing key = %d, want 0", rev)
	}
}

func TestGetJSONUndecodableNamesKey(t *testing.T) {
	cli := dialTest(t)
	key := ProgressKey(uniqueJob(t))
	if _, err := cli.Put(t.Context(), key, "{not json"); err != nil {
		t.Fatal(err)
	}
	var p schema.ProgressRecord
	_, err := GetJSON(t.Context(), cli, key, &p)
	if err == nil || errors.Is(err, ErrNotFound) {
		t.Fatalf("GetJSON of garbage: err = %v, want a decode error", err)
	}
	if !strings.Contains(err.Error(), key) {
		t.Errorf("error %q does not name the key %q", err, key)
	}
}

func TestPutJSONPassesOptions(t *testing.T) {
	cli := dialTest(t)
	ctx := t.Context()
	lease, err := cli.Grant(ctx, 30)
	if err != nil {
		t.Fatal(err)
	}
	key := PserverKey(uniqueJob(t), 0)
	if err := PutJSON(ctx, cli, key, schema.PserverRecord{Index: 0, Addr: "127.0.0.1:1"}, clientv3.WithLease(lease.ID)); err != nil {
		t.Fatal(err)
	}
	if _, err := cli.Revoke(ctx, lease.ID); err != nil {
		t.Fatal(err)
	}
	var rec schema.PserverRecord
	if _, err := GetJSON(ctx, cli, key, &rec); !errors.Is(err, ErrNotFound) {
		t.Errorf("record put under a revoked lease still readable: err = %v, rec = %+v", err, rec)
	}
}

func TestPutJSONUnencodableNamesKey(t *testing.T) {
	cli := dialTest(t)
	key := JobKey(uniqueJob(t))
	err := PutJSON(t.Context(), cli, key, make(chan int))
	if err == nil || !strings.Contains(err.Error(), key) {
		t.Fatalf("PutJSON of a channel: err = %v, want an encode error naming %q", err, key)
	}
	if resp, err := cli.Get(t.Context(), key); err != nil || len(resp.Kvs) != 0 {
		t.Errorf("failed PutJSON left something at %s (err %v)", key, err)
	}
}

func TestListJSONInKeyOrder(t *testing.T) {
	cli := dialTest(t)
	ctx := t.Context()
	job := uniqueJob(t)
	for _, id := range []int{10, 2, 0, 7} {
		if err := PutJSON(ctx, cli, TrainerKey(job, id), schema.TrainerRecord{ID: id, Worker: "w"}); err != nil {
			t.Fatal(err)
		}
	}
	// A key of another job sharing a name prefix must not be listed.
	if err := PutJSON(ctx, cli, TrainerKey(job+"x", 1), schema.TrainerRecord{ID: 1}); err != nil {
		t.Fatal(err)
	}
	got, err := ListJSON[schema.TrainerRecord](ctx, cli, TrainerPrefix(job))
	if err != nil {
		t.Fatal(err)
	}
	var ids []int
	for _, r := range got {
		ids = append(ids, r.ID)
	}
	// Trainer keys are not zero-padded: byte order puts "10" before "2".
	if want := []int{0, 10, 2, 7}; !reflect.DeepEqual(ids, want) {
		t.Errorf("ListJSON order = %v, want key order %v", ids, want)
	}

	empty, err := ListJSON[schema.TrainerRecord](ctx, cli, TrainerPrefix(uniqueJob(t)))
	if err != nil || len(empty) != 0 {
		t.Errorf("ListJSON of empty prefix = %v, %v; want empty, nil", empty, err)
	}
}

func TestListJSONUndecodableNamesKey(t *testing.T) {
	cli := dialTest(t)
	ctx := t.Context()
	job := uniqueJob(t)
	if err := PutJSON(ctx, cli, WorkerKey(job, "a"), schema.WorkerRecord{Name: "a"}); err != nil {
		t.Fatal(err)
	}
	bad := WorkerKey(job, "b")
	if _, err := cli.Put(ctx, bad, "]"); err != nil {
		t.Fatal(err)
	}
	_, err := ListJSON[schema.WorkerRecord](ctx, cli, WorkerPrefix(job))
	if err == nil || !strings.Contains(err.Error(), bad) {
		t.Fatalf("ListJSON over garbage: err = %v, want a decode error naming %q", err, bad)
	}
}

func TestEtcdErrorsNameKey(t *testing.T) {
	cli := dialTest(t)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	key := JobKey(uniqueJob(t))
	var rec schema.JobRecord
	if _, err := GetJSON(ctx, cli, key, &rec); err == nil || errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), key) {
		t.Errorf("GetJSON with canceled ctx: err = %v, want an etcd error naming %q", err, key)
	}
	if err := PutJSON(ctx, cli, key, rec); err == nil || !strings.Contains(err.Error(), key) {
		t.Errorf("PutJSON with canceled ctx: err = %v, want an etcd error naming %q", err, key)
	}
	if _, err := ListJSON[schema.JobRecord](ctx, cli, JobsPrefix()); err == nil || !strings.Contains(err.Error(), JobsPrefix()) {
		t.Errorf("ListJSON with canceled ctx: err = %v, want an etcd error naming %q", err, JobsPrefix())
	}
}

func TestMustJSON(t *testing.T) {
	if got, want := MustJSON(schema.TrainerRecord{ID: 3, Worker: "w"}), `{"id":3,"worker":"w"}`; got != want {
		t.Errorf("MustJSON = %s, want %s", got, want)
	}
	defer func() {
		r := recover()
		if r == nil || !strings.Contains(r.(string), "chan int") {
			t.Errorf("MustJSON(chan) panic = %v, want a message naming the type", r)
		}
	}()
	MustJSON(make(chan int))
}
