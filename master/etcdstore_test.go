package master

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/gtrain/gtrain/api"
	"github.com/gtrain/gtrain/coord"
	"github.com/gtrain/gtrain/coord/schema"
	"github.com/gtrain/gtrain/internal/testing/etcdtest"
	"github.com/gtrain/gtrain/master/core"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/concurrency"
)

// startTestEtcd returns the endpoint of the package's embedded etcd, empty
// for this test.
func startTestEtcd(t *testing.T) string {
	t.Helper()
	return etcdtest.Fresh(t).Endpoint
}

// dialTest returns a client of its own, as each master process has.
func dialTest(t *testing.T, endpoint string) *clientv3.Client {
	t.Helper()
	return etcdtest.Dial(t, endpoint)
}

// leadJob campaigns for job's mastership with a fresh session and returns
// once it leads.
func leadJob(t *testing.T, cli *clientv3.Client, job, value string) (*concurrency.Session, *coord.Leadership) {
	t.Helper()
	session, err := concurrency.NewSession(cli, concurrency.WithTTL(10))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { session.Close() })
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	lead, err := coord.Campaign(ctx, cli, session, coord.ElectionPrefix(job), value)
	if err != nil {
		t.Fatalf("%s campaigns for %s: %v", value, job, err)
	}
	return session, lead
}

// recordingCommitter passes commits through and remembers their ops.
type recordingCommitter struct {
	inner   Committer
	mu      sync.Mutex
	commits [][]clientv3.Op
}

func (r *recordingCommitter) Commit(ctx context.Context, ops ...clientv3.Op) error {
	r.mu.Lock()
	r.commits = append(r.commits, append([]clientv3.Op(nil), ops...))
	r.mu.Unlock()
	return r.inner.Commit(ctx, ops...)
}

func (r *recordingCommitter) take() [][]clientv3.Op {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.commits
	r.commits = nil
	return out
}

// storeStatuses is n statuses in every state, varied by salt.
func storeStatuses(n, salt int) []core.TaskStatus {
	base := time.Date(2026, 5, 6, 7, 8, 9, 123456789, time.UTC)
	out := make([]core.TaskStatus, n)
	for i := range out {
		st := core.TaskStatus{ID: i, State: core.TaskState((i + salt) % 4), Trainer: core.NoTrainer, Order: i*3 - salt}
		switch st.State {
		case core.Pending:
			st.Trainer = (i + salt) % 5
			st.Deadline = base.Add(time.Duration(i+salt) * time.Millisecond)
			st.Failures = salt % 3
		case core.Failed:
			st.Failures = 4
		}
		out[i] = st
	}
	return out
}

func sameStatus(a, b core.TaskStatus) bool {
	return a.ID == b.ID && a.State == b.State && a.Failures == b.Failures && a.Trainer == b.Trainer &&
		a.Order == b.Order && a.Deadline.Equal(b.Deadline) && a.Deadline.IsZero() == b.Deadline.IsZero()
}

func storeMeta(step int64) core.Meta {
	tl, vl, acc := 1.5, 2.5, 0.75
	return core.Meta{Tasks: 300, Pass: 2, Step: step, PassStartStep: step - 7, SamplesApplied: []int64{404, 404},
		PassSamples: 99, PassLossSum: 12.25, Metrics: api.Metrics{TrainLoss: &tl, TestLoss: &vl, TestAccuracy: &acc}}
}

// snapshotJob maps every key of job's master state to its mod revision.
func snapshotJob(t *testing.T, cli *clientv3.Client, job string) map[string]int64 {
	t.Helper()
	out := map[string]int64{}
	for _, prefix := range []string{coord.TaskPrefix(job), coord.MasterMetaKey(job), coord.ProgressKey(job)} {
		resp, err := cli.Get(t.Context(), prefix, clientv3.WithPrefix())
		if err != nil {
			t.Fatal(err)
		}
		for _, kv := range resp.Kvs {
			out[string(kv.Key)] = kv.ModRevision
		}
	}
	return out
}

func TestEtcdStore(t *testing.T) {
	endpoint := startTestEtcd(t)
	t.Run("round trip across several txns", func(t *testing.T) { testStoreRoundTrip(t, endpoint) })
	t.Run("core restores from etcd", func(t *testing.T) { testDriverRestoresFromEtcd(t, endpoint) })
	t.Run("a deposed master changes nothing", func(t *testing.T) {
		for _, how := range []string{"resigns", "loses its lease"} {
			t.Run(how, func(t *testing.T) { testDeposedMaster(t, endpoint, how) })
		}
	})
}

func testStoreRoundTrip(t *testing.T, endpoint string) {
	cli := dialTest(t, endpoint)
	const job = "roundtrip"
	_, lead := leadJob(t, cli, job, "m1")
	rec := &recordingCommitter{inner: lead}
	s := NewEtcdStore(cli, rec, job)
	s.maxOps = 5 // several commits per save at this size

	if meta, sts, err := s.Load(t.Context()); err != nil || meta != nil || sts != nil {
		t.Fatalf("Load of an empty store = %+v, %v, %v; want nothing", meta, sts, err)
	}
	const total = 3000 // 12 blocks
	// Block boundaries, and commit boundaries of blocks + Meta + progress.
	for _, n := range []int{0, 1, 255, 256, 257, 300, 1023, 1025, 3000} {
		meta := storeMeta(int64(1000 + n))
		changed := storeStatuses(total, n)[:n]
		progress := &schema.ProgressRecord{Pass: 2, Passes: 5, Step: int64(n)}
		if err := s.Save(t.Context(), meta, changed, progress); err != nil {
			t.Fatalf("core.Save of %d statuses: %v", n, err)
		}
		checkSaveCommits(t, job, n, s.maxOps, rec.take())
		checkLoad(t, cli, s, job, meta, changed, int64(n))
	}
	// The last save wrote every task: Load returns all, by ID, later saves winning.
	_, sts, err := NewEtcdStore(cli, lead, job).Load(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	want := storeStatuses(total, total)
	if len(sts) != len(want) {
		t.Fatalf("Load returned %d statuses, want %d", len(sts), len(want))
	}
	for i := range want {
		if !sameStatus(sts[i], want[i]) {
			t.Fatalf("status %d = %+v, want %+v", i, sts[i], want[i])
		}
	}
}

// checkSaveCommits checks the commits of a save of n statuses (IDs 0..n-1):
// one put per block touched, none over maxOps, Meta and progress last, together.
func checkSaveCommits(t *testing.T, job string, n, maxOps int, commits [][]clientv3.Op) {
	t.Helper()
	blocks := (n + tasksPerBlock - 1) / tasksPerBlock
	if want := max(1, (blocks+2+maxOps-1)/maxOps); len(commits) < want {
		t.Fatalf("core.Save of %d statuses made %d commits, want at least %d", n, len(commits), want)
	}
	total := 0
	for i, c := range commits {
		total += len(c)
		if len(c) > maxOps || len(c) == 0 {
			t.Fatalf("core.Save of %d statuses: commit %d has %d ops", n, i, len(c))
		}
		for j, op := range c {
			key := string(op.KeyBytes())
			isMeta := key == coord.MasterMetaKey(job) || key == coord.ProgressKey(job)
			if isMeta != (i == len(commits)-1 && j >= len(c)-2) {
				t.Fatalf("core.Save of %d statuses: key %s in commit %d at %d; core.Meta and progress go last, together", n, key, i, j)
			}
		}
	}
	if total != blocks+2 {
		t.Fatalf("core.Save of %d statuses wrote %d ops, want %d blocks + 2", n, total, blocks)
	}
}

// checkLoad checks that s loads meta and changed, and the progress of step.
func checkLoad(t *testing.T, cli *clientv3.Client, s *EtcdStore, job string, meta core.Meta, changed []core.TaskStatus, step int64) {
	t.Helper()
	gotMeta, gotStatuses, err := s.Load(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(*gotMeta, meta) {
		t.Fatalf("Load after saving %d: meta %+v, want %+v", len(changed), *gotMeta, meta)
	}
	byID := map[int]core.TaskStatus{}
	for _, st := range gotStatuses {
		byID[st.ID] = st
	}
	for _, st := range changed {
		if !sameStatus(byID[st.ID], st) {
			t.Fatalf("Load after saving %d: task %d = %+v, want %+v", len(changed), st.ID, byID[st.ID], st)
		}
	}
	var gotProgress schema.ProgressRecord
	if _, err := coord.GetJSON(t.Context(), cli, coord.ProgressKey(job), &gotProgress); err != nil || gotProgress.Step != step {
		t.Fatalf("stored progress %+v, %v; want step %d", gotProgress, err, step)
	}
}

func testDriverRestoresFromEtcd(t *testing.T, endpoint string) {
	cli := dialTest(t, endpoint)
	const job = "corerestore"
	_, lead := leadJob(t, cli, job, "m1")
	ts := manyTaskSet(250) // the first save spans three txns
	clock := newFakeClock()
	cfg := core.FixtureAsyncConfig(4, 2, 2)
	old := mustDriver(t, t.Context(), cfg, ts, NewEtcdStore(cli, lead, job), &fakeEvaluator{}, clock)
	held := map[int]core.Task{}
	for k := range 4 {
		held[k] = mustReady(t, mustGetTask(t, old, k, -1, 0))
	}
	mustReady(t, mustGetTask(t, old, 1, held[1].ID, held[1].Records))
	c := mustDriver(t, t.Context(), cfg, ts, NewEtcdStore(cli, lead, job), &fakeEvaluator{}, clock)
	if !reflect.DeepEqual(metaOf(c), metaOf(old)) {
		t.Fatalf("meta restored from etcd %+v, want %+v", metaOf(c), metaOf(old))
	}
	a, b := statusesOf(c), statusesOf(old)
	for i := range b {
		if !sameStatus(a[i], b[i]) {
			t.Fatalf("status restored from etcd %+v, want %+v", a[i], b[i])
		}
	}
}

// standBy campaigns for job as B on cliB while A leads; the channel gets B's
// leadership once it wins.
func standBy(t *testing.T, cliB *clientv3.Client, job string) <-chan *coord.Leadership {
	t.Helper()
	sessB, err := concurrency.NewSession(cliB, concurrency.WithTTL(10))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sessB.Close() })
	wonB := make(chan *coord.Leadership, 1)
	go func() {
		l, err := coord.Campaign(t.Context(), cliB, sessB, coord.ElectionPrefix(job), "B")
		if err != nil {
			t.Errorf("B campaigns: %v", err)
		}
		wonB <- l
	}()
	return wonB
}

// stepDown deposes A (it resigns or its lease ends) and returns B's leadership.
func stepDown(t *testing.T, how string, sessA *concurrency.Session, leadA *coord.Leadership, wonB <-chan *coord.Leadership) *coord.Leadership {
	t.Helper()
	switch how {
	case "resigns":
		if err := leadA.Resign(t.Context()); err != nil {
			t.Fatal(err)
		}
	default:
		if err := sessA.Close(); err != nil { // revokes A's lease
			t.Fatal(err)
		}
	}
	select {
	case leadB := <-wonB:
		if leadB == nil {
			t.FailNow()
		}
		if leadB.Rev() <= leadA.Rev() {
			t.Fatalf("B's term %d is not after A's %d", leadB.Rev(), leadA.Rev())
		}
		return leadB
	case <-time.After(10 * time.Second):
		t.Fatal("B did not win after A stepped down")
	}
	return nil
}

func testDeposedMaster(t *testing.T, endpoint, how string) {
	job := "fence-" + map[string]string{"resigns": "resign", "loses its lease": "lease"}[how]
	cliA, cliB := dialTest(t, endpoint), dialTest(t, endpoint)
	sessA, leadA := leadJob(t, cliA, job, "A")
	storeA := NewEtcdStore(cliA, leadA, job)
	// A master core of A's, on a job of its own, built while A leads.
	coreJob := job + "-core"
	coreA := mustDriver(t, t.Context(), core.FixtureAsyncConfig(1, 1, 1), manyTaskSet(130), NewEtcdStore(cliA, leadA, coreJob), &fakeEvaluator{}, newFakeClock())
	if err := storeA.Save(t.Context(), storeMeta(1), storeStatuses(200, 1), &schema.ProgressRecord{Step: 1}); err != nil {
		t.Fatalf("leader A saves: %v", err)
	}
	wonB := standBy(t, cliB, job)
	if v, err := coord.LeaderValue(t.Context(), cliA, coord.ElectionPrefix(job)); err != nil || v != "A" {
		t.Fatalf("leader while A leads: %q, %v", v, err)
	}
	leadB := stepDown(t, how, sessA, leadA, wonB)

	before, beforeCore := snapshotJob(t, cliB, job), snapshotJob(t, cliB, coreJob)
	if len(before) != 3 { // 200 tasks in one block, Meta, progress
		t.Fatalf("%d keys of A's state in etcd, want 3", len(before))
	}
	checkDeposedWritesNothing(t, cliA, leadA, storeA, coreA, job)
	if after := snapshotJob(t, cliB, job); !reflect.DeepEqual(after, before) {
		t.Fatalf("deposed A changed etcd: %d keys before, %d after", len(before), len(after))
	}
	if after := snapshotJob(t, cliB, coreJob); !reflect.DeepEqual(after, beforeCore) || len(after) != 3 { // 130 tasks in one block, Meta, progress
		t.Fatalf("deposed A's core changed etcd: %d keys before, %d after", len(beforeCore), len(after))
	}
	if resp, err := cliB.Get(t.Context(), coord.TrainerPrefix(job), clientv3.WithPrefix()); err != nil || len(resp.Kvs) != 0 {
		t.Fatalf("deposed A's trainer registration reached etcd: %v, %v", resp, err)
	}

	storeB := NewEtcdStore(cliB, leadB, job)
	meta, _, err := storeB.Load(t.Context())
	if err != nil || meta.Step != 1 {
		t.Fatalf("B loads %+v, %v; want A's last good save (step 1)", meta, err)
	}
	if err := storeB.Save(t.Context(), storeMeta(4), storeStatuses(200, 4), &schema.ProgressRecord{Step: 4}); err != nil {
		t.Fatalf("leader B saves: %v", err)
	}
	meta, sts, err := storeB.Load(t.Context())
	if err != nil || meta.Step != 4 || !sameStatus(sts[5], storeStatuses(200, 4)[5]) {
		t.Fatalf("after B's save: %+v, %v", meta, err)
	}
}

// checkDeposedWritesNothing has deposed A save, change its core and register
// a trainer: each must be fenced.
func checkDeposedWritesNothing(t *testing.T, cliA *clientv3.Client, leadA *coord.Leadership, storeA *EtcdStore, coreA *Driver, job string) {
	t.Helper()
	err := storeA.Save(t.Context(), storeMeta(2), storeStatuses(200, 2), &schema.ProgressRecord{Step: 2})
	if !errors.Is(err, coord.ErrFenced) {
		t.Fatalf("deposed A saves: %v, want ErrFenced", err)
	}
	if err := storeA.Save(t.Context(), storeMeta(3), storeStatuses(3, 3), nil); !errors.Is(err, coord.ErrFenced) {
		t.Fatalf("deposed A saves one commit: %v, want ErrFenced", err)
	}
	// A deposed master's core stops at its first change.
	if _, err := coreA.GetTask(t.Context(), 0, -1, -1, 0, 0); !errors.Is(err, coord.ErrFenced) {
		t.Fatalf("GetTask on a deposed master: %v, want ErrFenced", err)
	}
	if !errors.Is(coreA.Fatal(), coord.ErrFenced) {
		t.Fatalf("deposed master's Fatal() = %v, want ErrFenced", coreA.Fatal())
	}
	if _, err := NewTrainerRegistry(cliA, leadA, job, 2).Register(t.Context(), "trainer-0", 0); !errors.Is(err, coord.ErrFenced) {
		t.Fatalf("deposed A registers a trainer: %v, want ErrFenced", err)
	}
}

// registryFixture is a registry's etcd and the helpers of its tests.
type registryFixture struct {
	cli *clientv3.Client
}

func (f registryFixture) grant(t *testing.T) int64 {
	t.Helper()
	l, err := f.cli.Grant(t.Context(), 60)
	if err != nil {
		t.Fatal(err)
	}
	return int64(l.ID)
}

func (f registryFixture) register(t *testing.T, r *TrainerRegistry, worker string, lease int64) int {
	t.Helper()
	id, err := r.Register(t.Context(), worker, lease)
	if err != nil {
		t.Fatalf("Register(%s): %v", worker, err)
	}
	return id
}

// holders reads the trainer keys: ID -> worker, checking each key's lease.
func (f registryFixture) holders(t *testing.T, job string, leases map[string]int64) map[int]string {
	t.Helper()
	resp, err := f.cli.Get(t.Context(), coord.TrainerPrefix(job), clientv3.WithPrefix())
	if err != nil {
		t.Fatal(err)
	}
	out := map[int]string{}
	for _, kv := range resp.Kvs {
		var rec schema.TrainerRecord
		if err := json.Unmarshal(kv.Value, &rec); err != nil {
			t.Fatal(err)
		}
		if string(kv.Key) != coord.TrainerKey(job, rec.ID) {
			t.Fatalf("trainer %d stored under %s", rec.ID, kv.Key)
		}
		if want := leases[rec.Worker]; kv.Lease != want {
			t.Fatalf("trainer key of %s has lease %x, want %x", rec.Worker, kv.Lease, want)
		}
		out[rec.ID] = rec.Worker
	}
	return out
}

func TestTrainerRegistry(t *testing.T) {
	f := registryFixture{cli: dialTest(t, startTestEtcd(t))}
	t.Run("dense IDs, kept, full, freed with the lease", func(t *testing.T) { testRegistryIDs(t, f) })
	t.Run("trainer-K prefers ID K", func(t *testing.T) { testRegistryNames(t, f) })
}

func testRegistryIDs(t *testing.T, f registryFixture) {
	const job, n = "reg", 3
	ctx, cli := t.Context(), f.cli
	_, lead := leadJob(t, cli, job, "m")
	r := NewTrainerRegistry(cli, lead, job, n)
	leases := map[string]int64{}
	ids := map[string]int{}
	for _, w := range []string{"alpha", "beta", "gamma"} {
		leases[w] = f.grant(t)
		ids[w] = f.register(t, r, w, leases[w])
	}
	got := []int{ids["alpha"], ids["beta"], ids["gamma"]}
	sort.Ints(got)
	if !reflect.DeepEqual(got, []int{0, 1, 2}) {
		t.Fatalf("IDs %v, want 0..%d", ids, n-1)
	}
	if h := f.holders(t, job, leases); len(h) != n {
		t.Fatalf("trainer keys %v", h)
	}
	// The same worker gets its ID back, also under a new lease (restarted).
	if id := f.register(t, r, "beta", leases["beta"]); id != ids["beta"] {
		t.Fatalf("beta registered again got %d, had %d", id, ids["beta"])
	}
	oldBeta := leases["beta"]
	leases["beta"] = f.grant(t)
	if id := f.register(t, r, "beta", leases["beta"]); id != ids["beta"] {
		t.Fatalf("beta under a new lease got %d, had %d", id, ids["beta"])
	}
	f.holders(t, job, leases) // the key moved to the new lease
	if _, err := r.Register(ctx, "delta", f.grant(t)); !errors.Is(err, ErrTrainersFull) {
		t.Fatalf("fourth worker of 3: %v, want ErrTrainersFull", err)
	}
	// beta's old lease dying frees nothing; gamma's does.
	if _, err := cli.Revoke(ctx, clientv3.LeaseID(oldBeta)); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Register(ctx, "delta", f.grant(t)); !errors.Is(err, ErrTrainersFull) {
		t.Fatalf("after beta's stale lease ended: %v, want ErrTrainersFull", err)
	}
	if _, err := cli.Revoke(ctx, clientv3.LeaseID(leases["gamma"])); err != nil {
		t.Fatal(err)
	}
	delete(leases, "gamma")
	leases["delta"] = f.grant(t)
	if id := f.register(t, r, "delta", leases["delta"]); id != ids["gamma"] {
		t.Fatalf("delta got %d, want gamma's freed ID %d", id, ids["gamma"])
	}
	want := map[int]string{ids["alpha"]: "alpha", ids["beta"]: "beta", ids["gamma"]: "delta"}
	if h := f.holders(t, job, leases); !reflect.DeepEqual(h, want) {
		t.Fatalf("trainer keys %v, want %v", h, want)
	}
}

func testRegistryNames(t *testing.T, f registryFixture) {
	const job = "reg-names"
	_, lead := leadJob(t, f.cli, job, "m")
	r := NewTrainerRegistry(f.cli, lead, job, 3)
	leases := map[string]int64{}
	for _, c := range []struct {
		worker string
		want   int
	}{{"trainer-2", 2}, {"trainer-0", 0}, {"trainer-7", 1}} {
		leases[c.worker] = f.grant(t)
		if id := f.register(t, r, c.worker, leases[c.worker]); id != c.want {
			t.Fatalf("Register(%s) = %d, want %d", c.worker, id, c.want)
		}
	}
	if _, err := r.Register(t.Context(), "trainer-1", f.grant(t)); !errors.Is(err, ErrTrainersFull) {
		t.Fatalf("trainer-1 with every ID held: %v, want ErrTrainersFull", err)
	}
	if h := f.holders(t, job, leases); len(h) != 3 {
		t.Fatalf("trainer keys %v", h)
	}
}

// Compile-time check that Leadership is a Committer.
var _ Committer = (*coord.Leadership)(nil)
