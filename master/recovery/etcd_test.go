package recovery

import (
	"context"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gtrain/gtrain/checkpoint"
	"github.com/gtrain/gtrain/coord"
	"github.com/gtrain/gtrain/coord/schema"
	"github.com/gtrain/gtrain/internal/testing/etcdtest"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/concurrency"
)

// The etcd tests share one embedded etcd (etcdtest.Fresh empties it per test).
func TestMain(m *testing.M) {
	os.Exit(etcdtest.Main(m))
}

// etcdJob returns a client of an empty etcd and the records of job j led
// by it.
func etcdJob(t *testing.T) (*clientv3.Client, *etcdRecords) {
	t.Helper()
	cli := etcdtest.Dial(t, etcdtest.Fresh(t).Endpoint)
	session, err := concurrency.NewSession(cli, concurrency.WithTTL(10))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { session.Close() })
	lead, err := coord.Campaign(t.Context(), cli, session, coord.ElectionPrefix("j"), "m")
	if err != nil {
		t.Fatal(err)
	}
	return cli, &etcdRecords{cli: cli, lead: lead, job: "j"}
}

func put(t *testing.T, cli *clientv3.Client, key, value string, opts ...clientv3.OpOption) {
	t.Helper()
	if _, err := cli.Put(t.Context(), key, value, opts...); err != nil {
		t.Fatal(err)
	}
}

// The checkpoint records on etcd: none at first; marks named by who wrote
// them; a declaration drops the marks before its oldest kept step, a
// rollback those after its step; the watches see marks and changes.
func TestEtcdCheckpointRecords(t *testing.T) {
	cli, e := etcdJob(t)
	ctx := t.Context()
	if g, rev, err := e.Global(ctx); err != nil || rev != 0 || g.Step != 0 {
		t.Fatalf("no record: %+v at %d, %v; want zero, 0, nil", g, rev, err)
	}
	watchCtx, stopWatch := context.WithCancel(ctx)
	marked := make(chan int64, 8)
	watched := make(chan error, 1)
	go func() { watched <- e.WatchMarks(watchCtx, func(step int64) { marked <- step }) }()
	waitWatching(t, e, marked)
	for _, step := range []int64{10, 20, 30} {
		if err := e.MarkMaster(ctx, checkpoint.Record{Step: step, File: "f", SHA256: "00"}); err != nil {
			t.Fatal(err)
		}
		put(t, cli, coord.CheckpointMarkKey("j", step, "pserver-0"), "f")
	}
	seen := map[int64]int{}
	for seen[10]+seen[20]+seen[30] < 6 {
		select {
		case step := <-marked:
			seen[step]++
		case <-time.After(5 * time.Second):
			t.Fatalf("the watch missed a mark: saw %v, want two of each of 10, 20, 30", seen)
		}
	}
	if who, err := e.Marks(ctx, 20); err != nil || !slices.Equal(who, []string{coord.MasterMark, "pserver-0"}) {
		t.Fatalf("marks of step 20: %v, %v", who, err)
	}

	changed := e.GlobalChanged(ctx, 0)
	if err := e.Declare(ctx, schema.GlobalCheckpoint{Step: 30, Pass: 1, Steps: []int64{20, 30}}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-changed:
	case <-time.After(5 * time.Second):
		t.Fatal("the declaration did not fire GlobalChanged")
	}
	g, rev, err := e.Global(ctx)
	if err != nil || rev == 0 || g.Step != 30 || !slices.Equal(g.Steps, []int64{20, 30}) {
		t.Fatalf("after the declaration: %+v at %d, %v", g, rev, err)
	}
	if who, _ := e.Marks(ctx, 10); len(who) != 0 {
		t.Fatalf("marks of step 10 after declaring [20 30]: %v, want none", who)
	}
	if err := e.RollBack(ctx, schema.GlobalCheckpoint{Step: 20, Pass: 1, Steps: []int64{20}}); err != nil {
		t.Fatal(err)
	}
	if who, _ := e.Marks(ctx, 30); len(who) != 0 {
		t.Fatalf("marks of step 30 after a rollback to 20: %v, want none", who)
	}
	if who, _ := e.Marks(ctx, 20); len(who) != 2 {
		t.Fatalf("marks of step 20 after a rollback to it: %v, want both", who)
	}
	stopWatch()
	if err := <-watched; err != nil {
		t.Fatalf("the mark watch ended with %v when its context did, want nil", err)
	}
}

// The pservers' registrations carry the lease of their incarnation; the
// watch goes on from the revision Registrations returned.
func TestEtcdRegistrations(t *testing.T) {
	cli, e := etcdJob(t)
	p := &etcdPservers{cli: cli, lead: e.lead, job: "j"}
	lease, err := cli.Grant(t.Context(), 30)
	if err != nil {
		t.Fatal(err)
	}
	put(t, cli, coord.PserverKey("j", 0), coord.MustJSON(schema.PserverRecord{Index: 0, Ready: true}), clientv3.WithLease(lease.ID))
	put(t, cli, coord.PserverKey("j", 1), "not json")
	regs, rev, err := p.Registrations(t.Context())
	if err != nil || len(regs) != 1 || regs[0].Index != 0 || !regs[0].Ready || regs[0].Lease != int64(lease.ID) {
		t.Fatalf("registrations %+v, %v; want pserver-0 under lease %d", regs, err, lease.ID)
	}
	put(t, cli, coord.PserverKey("j", 1), coord.MustJSON(schema.PserverRecord{Index: 1, Ready: true, RestoredStep: 7}))
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	var got []Registration
	err = p.WatchRegistrations(ctx, rev, func(r Registration) error {
		got = append(got, r)
		cancel()
		return nil
	})
	if err != nil || len(got) != 1 || got[0].Index != 1 || got[0].RestoredStep != 7 {
		t.Fatalf("watched %+v, %v; want pserver-1's registration after the read", got, err)
	}
}

// waitWatching marks step 1 until the watch reports it: from then on the
// watch sees every mark.
func waitWatching(t *testing.T, e *etcdRecords, marked <-chan int64) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); {
		if err := e.MarkMaster(t.Context(), checkpoint.Record{Step: 1, File: "f", SHA256: "00"}); err != nil {
			t.Fatal(err)
		}
		select {
		case <-marked:
			return
		case <-time.After(100 * time.Millisecond):
		}
	}
	t.Fatal("the mark watch never reported a mark")
}

// A finished re-shard's layout and event go in one commit, and the job then
// keeps its newest coord.MaxJobEvents, as after any event.
func TestEtcdFinishKeepsTheNewestEvents(t *testing.T) {
	cli, e := etcdJob(t)
	ctx := t.Context()
	ops := make([]clientv3.Op, 0, coord.MaxJobEvents)
	past := time.Now().Add(-time.Hour)
	for i := range coord.MaxJobEvents {
		ops = append(ops, clientv3.OpPut(coord.EventKey("j", past.Add(time.Duration(i)*time.Second), "p"), `{"what":"past"}`))
	}
	for batch := range slices.Chunk(ops, 100) {
		if _, err := cli.Txn(ctx).Then(batch...).Commit(); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.Finish(ctx, schema.LayoutRecord{Pservers: 3}, "re-shard done"); err != nil {
		t.Fatal(err)
	}
	if l, err := e.Layout(ctx); err != nil || l.Pservers != 3 {
		t.Fatalf("layout after Finish: %+v, %v", l, err)
	}
	resp, err := cli.Get(ctx, coord.EventPrefix("j"), clientv3.WithPrefix(), clientv3.WithSort(clientv3.SortByKey, clientv3.SortDescend), clientv3.WithLimit(1))
	if err != nil {
		t.Fatal(err)
	}
	if resp.Count != coord.MaxJobEvents || !strings.Contains(string(resp.Kvs[0].Value), "re-shard done") {
		t.Fatalf("after Finish: %d events, the newest %s; want %d, the finish's", resp.Count, resp.Kvs[0].Value, coord.MaxJobEvents)
	}
}
