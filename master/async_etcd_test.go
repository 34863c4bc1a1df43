package master

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/gtrain/gtrain/coord"
	"github.com/gtrain/gtrain/coord/schema"
	"github.com/gtrain/gtrain/master/core"
	clientv3 "go.etcd.io/etcd/client/v3"
)

var errCrashAfterSave = errors.New("test: master killed after persisting, before answering")

// crashAfterSave persists through the real store, then, once armed, fails
// the save that wrote a dispatch: the state is in etcd, but the driver turns
// fatal and the trainer never hears the answer, as when a master is killed
// between its etcd commit and its gRPC reply.
type crashAfterSave struct {
	Store
	mu    sync.Mutex
	armed bool
}

func (c *crashAfterSave) Save(ctx context.Context, meta core.Meta, changed []core.TaskStatus, progress *schema.ProgressRecord) error {
	if err := c.Store.Save(ctx, meta, changed, progress); err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, s := range changed {
		if c.armed && s.State == core.Pending {
			c.armed = false
			return errCrashAfterSave
		}
	}
	return nil
}

// registerTrainer puts trainer id's key under a lease of its own, as a live
// trainer's registration is, and returns the lease.
func registerTrainer(t *testing.T, cli *clientv3.Client, job string, id int) clientv3.LeaseID {
	t.Helper()
	lease, err := cli.Grant(t.Context(), 60)
	if err != nil {
		t.Fatal(err)
	}
	rec := schema.TrainerRecord{ID: id, Worker: "trainer-x"}
	if _, err := cli.Put(t.Context(), coord.TrainerKey(job, id), coord.MustJSON(rec), clientv3.WithLease(lease.ID)); err != nil {
		t.Fatal(err)
	}
	return lease.ID
}

func waitStatus(t *testing.T, d *Driver, id int, what string, cond func(core.TaskStatus) bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond(statusOf(d, id)) {
		if time.Now().After(deadline) {
			t.Fatalf("task %d: %s: still %+v", id, what, statusOf(d, id))
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestAsyncMasterKilledBetweenPersistAndAnswer(t *testing.T) {
	// samples_applied is exact: the repeated report is not counted again and
	// the dispatch nobody heard goes out again.
	cli := dialTest(t, startTestEtcd(t))
	job := "async-crash"
	_, lead := leadJob(t, cli, job, "m1")
	ts, cfg := core.FixtureTaskSet(), core.FixtureAsyncConfig(2, 4, 1)
	clock := newFakeClock()
	lease0 := registerTrainer(t, cli, job, 0) // trainer 1 is dead: no key

	ctx1, kill := context.WithCancel(t.Context())
	store1 := &crashAfterSave{Store: NewEtcdStore(cli, lead, job)}
	d1 := mustDriver(t, ctx1, cfg, ts, store1, &fakeEvaluator{}, clock)
	a := mustReady(t, mustGetTask(t, d1, 0, -1, 0))
	orphan := mustReady(t, mustGetTask(t, d1, 1, -1, 0))
	store1.mu.Lock()
	store1.armed = true
	store1.mu.Unlock()
	if _, err := d1.GetTask(t.Context(), 0, a.ID, -1, 1, int64(a.Records)); !errors.Is(err, errCrashAfterSave) {
		t.Fatalf("GetTask on the master killed after its commit: %v, want the crash", err)
	}
	kill()

	d2 := mustDriver(t, t.Context(), cfg, ts, NewEtcdStore(cli, lead, job), &fakeEvaluator{}, clock)
	go watchTrainers(t.Context(), cli, job, d2, slog.New(slog.DiscardHandler))
	// The dead trainer's task, pending in etcd, goes back without a failure.
	waitStatus(t, d2, orphan.ID, "a dead trainer's task at master start", func(s core.TaskStatus) bool {
		return s.State == core.Todo && s.Failures == 0
	})
	// The trainer retries its call: the report is not counted twice, and it
	// gets the task the lost answer carried.
	unheard := -1
	for _, s := range statusesOf(d2) {
		if s.State == core.Pending && s.Trainer == 0 {
			unheard = s.ID
		}
	}
	b := mustReady(t, mustGetTask(t, d2, 0, a.ID, a.Records))
	if unheard < 0 || b.ID != unheard {
		t.Fatalf("the retry got task %d, want the dispatch persisted but never answered (%d)", b.ID, unheard)
	}
	if st := statusOf(d2, a.ID); st.State != core.Done {
		t.Fatalf("reported task after the retry: %+v, want done", st)
	}
	if m := metaOf(d2); m.PassSamples != int64(a.Records) {
		t.Fatalf("samples after the retried report %d, want %d once", m.PassSamples, a.Records)
	}
	checkLeaseKeepsTask(t, d2, clock, cli, cfg, lease0, b.ID)
	driveAsync(t, d2, map[int]*core.Task{})
	flush(t, d2)
	if m := metaOf(d2); !m.Done || len(m.SamplesApplied) != 1 || m.SamplesApplied[0] != int64(ts.Records) {
		t.Fatalf("end meta %+v, want done with samples_applied [%d]", m, ts.Records)
	}
	if n := countsOf(d2); n.Failed != 0 {
		t.Fatalf("counts at the end %+v, want no failed task", n)
	}
}

// checkLeaseKeepsTask checks that trainer 0, alive by its lease, keeps task
// id however long it takes, and loses it (without a failure) with the lease.
func checkLeaseKeepsTask(t *testing.T, d *Driver, clock *fakeClock, cli *clientv3.Client, cfg core.CoreConfig, lease clientv3.LeaseID, id int) {
	t.Helper()
	for range 5 {
		clock.Advance(cfg.Queue.Timeout)
		tick(t, d)
	}
	if st := statusOf(d, id); st.State != core.Pending || st.Trainer != 0 {
		t.Fatalf("task of a trainer with a live lease after 5 timeouts: %+v, want pending", st)
	}
	if _, err := cli.Revoke(t.Context(), lease); err != nil {
		t.Fatal(err)
	}
	waitStatus(t, d, id, "the task of a trainer whose lease ended", func(s core.TaskStatus) bool {
		return s.State == core.Todo && s.Failures == 0
	})
}
