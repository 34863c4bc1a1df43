package coord

import (
	"testing"
	"time"

	"github.com/gtrain/gtrain/api"
	clientv3 "go.etcd.io/etcd/client/v3"
)

func historyEntry(pass int, loss float64) api.PassHistory {
	return api.PassHistory{Pass: pass, TrainLoss: &loss, Samples: 404, Seconds: 2, RecordsPerS: 202}
}

// TestMergeHistory: an entry goes after the earlier passes; a pass that
// finishes again (after a rollback) replaces itself and drops the later ones.
func TestMergeHistory(t *testing.T) {
	var block []byte
	var err error
	for p := range 4 {
		if block, err = MergeHistory(block, historyEntry(p, float64(p))); err != nil {
			t.Fatal(err)
		}
	}
	if block, err = MergeHistory(block, historyEntry(2, 20)); err != nil {
		t.Fatal(err)
	}
	got, err := DecodeHistory("j", [][]byte{block}, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 || got[2].Pass != 2 || *got[2].TrainLoss != 20 {
		t.Fatalf("after pass 2 finished again: %+v, want passes 0, 1 and the new 2", got)
	}
	if _, err := MergeHistory([]byte("{"), historyEntry(0, 0)); err == nil {
		t.Error("a damaged block merged without error")
	}
	if b, ok := ParseHistoryBlockKey("j", HistoryBlockKey("j", 12)); !ok || b != 12 {
		t.Errorf("ParseHistoryBlockKey = %d %v, want 12", b, ok)
	}
	if _, ok := ParseHistoryBlockKey("j", HistoryBlockKey("jj", 1)); ok {
		t.Error("a key of another job parsed")
	}
}

// TestHistoryInEtcd: 200 passes go into blocks of HistoryBlockPasses; the
// read returns the passes before its bound, in order; a purge removes them.
func TestHistoryInEtcd(t *testing.T) {
	cli := dialTest(t)
	job := uniqueJob(t)
	const passes = 200
	for p := range passes {
		op, err := HistoryPut(t.Context(), cli, job, historyEntry(p, float64(p)))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := cli.Txn(t.Context()).Then(op).Commit(); err != nil {
			t.Fatal(err)
		}
	}
	resp, err := cli.Get(t.Context(), HistoryPrefix(job), clientv3.WithPrefix(), clientv3.WithCountOnly())
	if err != nil {
		t.Fatal(err)
	}
	if want := int64((passes + HistoryBlockPasses - 1) / HistoryBlockPasses); resp.Count != want {
		t.Errorf("%d history keys, want %d blocks", resp.Count, want)
	}
	got, err := ReadHistory(t.Context(), cli, job, 150)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 150 {
		t.Fatalf("%d entries before pass 150, want 150", len(got))
	}
	for i, e := range got {
		if e.Pass != i || *e.TrainLoss != float64(i) {
			t.Fatalf("entry %d = %+v", i, e)
		}
	}
	if _, err := cli.Txn(t.Context()).Then(PurgeJobOps(job)...).Commit(); err != nil {
		t.Fatal(err)
	}
	if got, _ := ReadHistory(t.Context(), cli, job, passes); len(got) != 0 {
		t.Errorf("%d history entries left after the purge", len(got))
	}
}

// TestEventsAfterAndWatch: a read from a key returns only later events; a
// watch from the read's revision delivers the next one.
func TestEventsAfterAndWatch(t *testing.T) {
	cli := dialTest(t)
	job := uniqueJob(t)
	for _, what := range []string{"a", "b", "c"} {
		if err := AppendEvent(t.Context(), cli, job, what); err != nil {
			t.Fatal(err)
		}
	}
	all, rev, err := EventsAfter(t.Context(), cli, job, "")
	if err != nil || len(all) != 3 {
		t.Fatalf("EventsAfter(\"\") = %d events, %v; want 3", len(all), err)
	}
	later, _, err := EventsAfter(t.Context(), cli, job, all[0].Key)
	if err != nil || len(later) != 2 || later[0].Event.What != "b" {
		t.Fatalf("EventsAfter(first) = %+v, %v; want b, c", later, err)
	}
	batches := WatchEvents(t.Context(), cli, job, rev+1)
	if err := AppendEvent(t.Context(), cli, job, "d"); err != nil {
		t.Fatal(err)
	}
	select {
	case b := <-batches:
		if b.Err != nil || len(b.Events) != 1 || b.Events[0].Event.What != "d" {
			t.Fatalf("watch: %+v, want the event d", b)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the watch delivered nothing")
	}
}
