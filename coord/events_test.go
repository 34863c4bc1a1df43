package coord

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/gtrain/gtrain/api"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// TestAppendEventKeepsTheNewest: a job at the cap that gets one more event
// loses its oldest, keeps MaxJobEvents, the new one among them.
func TestAppendEventKeepsTheNewest(t *testing.T) {
	cli := dialTest(t)
	job := uniqueJob(t)
	base := fillEvents(t, cli, job)
	if err := AppendEvent(t.Context(), cli, job, "newest"); err != nil {
		t.Fatal(err)
	}
	checkNewestKept(t, cli, job, base, "newest")
}

// fillEvents writes MaxJobEvents events "old" to job, an hour ago a
// millisecond apart, and returns the first one's time.
func fillEvents(t *testing.T, cli *clientv3.Client, job string) time.Time {
	t.Helper()
	base := time.Now().Add(-time.Hour)
	for first := 0; first < MaxJobEvents; first += 100 {
		var ops []clientv3.Op
		for i := first; i < first+100; i++ {
			at := base.Add(time.Duration(i) * time.Millisecond)
			ops = append(ops, clientv3.OpPut(EventKey(job, at, "x"), MustJSON(api.Event{Time: at, What: "old"})))
		}
		if _, err := cli.Txn(t.Context()).Then(ops...).Commit(); err != nil {
			t.Fatal(err)
		}
	}
	return base
}

// checkNewestKept checks job has MaxJobEvents events, from the second of
// fillEvents's to newest.
func checkNewestKept(t *testing.T, cli *clientv3.Client, job string, base time.Time, newest string) {
	t.Helper()
	resp, err := cli.Get(t.Context(), EventPrefix(job), clientv3.WithPrefix())
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Kvs) != MaxJobEvents {
		t.Fatalf("%d events kept, want %d", len(resp.Kvs), MaxJobEvents)
	}
	if first := string(resp.Kvs[0].Key); first != EventKey(job, base.Add(time.Millisecond), "x") {
		t.Errorf("oldest event kept is %s, want the second one written", first)
	}
	var last api.Event
	if err := json.Unmarshal(resp.Kvs[len(resp.Kvs)-1].Value, &last); err != nil || last.What != newest {
		t.Errorf("newest event kept = %+v (%v), want %q", last, err, newest)
	}
}

// TestTrimEventsBelowCap: nothing is deleted under the cap; above it, only
// the oldest go.
func TestTrimEventsBelowCap(t *testing.T) {
	cli := dialTest(t)
	job := uniqueJob(t)
	base := time.Now()
	for i := range 30 {
		at := base.Add(time.Duration(i) * time.Second)
		if err := PutJSON(t.Context(), cli, EventKey(job, at, "y"), api.Event{Time: at, What: "e"}); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct{ keep, want int }{{40, 30}, {30, 30}, {20, 20}, {1, 1}} {
		if err := trimEvents(t.Context(), cli, job, c.keep); err != nil {
			t.Fatal(err)
		}
		resp, err := cli.Get(t.Context(), EventPrefix(job), clientv3.WithPrefix(), clientv3.WithKeysOnly())
		if err != nil {
			t.Fatal(err)
		}
		if len(resp.Kvs) != c.want {
			t.Fatalf("keep %d: %d events left, want %d", c.keep, len(resp.Kvs), c.want)
		}
		if newest := string(resp.Kvs[len(resp.Kvs)-1].Key); newest != EventKey(job, base.Add(29*time.Second), "y") {
			t.Fatalf("keep %d: newest left is %s, want the last written", c.keep, newest)
		}
	}
}
