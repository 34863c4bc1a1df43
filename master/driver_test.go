package master

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/gtrain/gtrain/api"
	"github.com/gtrain/gtrain/coord/schema"
	"github.com/gtrain/gtrain/internal/clock"
	"github.com/gtrain/gtrain/master/core"
)

// --- fakes -----------------------------------------------------------------

// fakeClock is a settable Clock: Advance moves the wall and the monotonic
// clock together, Jump only the wall clock (a step by NTP or an operator).
type fakeClock = clock.Fake

func newFakeClock() *fakeClock {
	return clock.NewFake(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
}

type evalCall struct {
	pass int
	step int64
}

// fakeEvaluator records its calls and returns TestLoss = 100+pass. When gate
// is set, each call waits for a value on it (or for ctx to end, then closes
// cancelled if set).
type fakeEvaluator struct {
	mu        sync.Mutex
	calls     []evalCall
	gate      chan struct{}
	cancelled chan struct{}
}

func (e *fakeEvaluator) EndPass(ctx context.Context, pass int, step int64) (api.Metrics, error) {
	e.mu.Lock()
	e.calls = append(e.calls, evalCall{pass, step})
	gate := e.gate
	e.mu.Unlock()
	if gate != nil {
		select {
		case <-gate:
		case <-ctx.Done():
			if e.cancelled != nil {
				close(e.cancelled)
			}
			return api.Metrics{}, ctx.Err()
		}
	}
	loss := 100 + float64(pass)
	return api.Metrics{TestLoss: &loss}, nil
}

func (e *fakeEvaluator) Calls() []evalCall {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Clone(e.calls)
}

// gatedStore is a MemStore whose first Save after arm() blocks until release().
type gatedStore struct {
	*MemStore
	mu       sync.Mutex
	armed    bool
	entered  chan struct{}
	released chan struct{}
}

func newGatedStore() *gatedStore {
	return &gatedStore{MemStore: &MemStore{}, entered: make(chan struct{}), released: make(chan struct{})}
}

func (g *gatedStore) arm() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.armed = true
}

func (g *gatedStore) release() { close(g.released) }

func (g *gatedStore) Save(ctx context.Context, meta core.Meta, changed []core.TaskStatus, progress *schema.ProgressRecord) error {
	g.mu.Lock()
	block := g.armed
	g.armed = false
	g.mu.Unlock()
	if block {
		close(g.entered)
		<-g.released
	}
	return g.MemStore.Save(ctx, meta, changed, progress)
}

// --- fixtures and helpers ----------------------------------------------------

// manyTaskSet is n one-chunk tasks of 3 records each.
func manyTaskSet(n int) *core.TaskSet {
	ts := &core.TaskSet{ChunkRecords: map[int][]int{}}
	for id := range n {
		ts.Tasks = append(ts.Tasks, core.Task{ID: id, File: fmt.Sprintf("f%d", id), Chunks: 1, Records: 3})
		ts.ChunkRecords[id] = []int{3}
		ts.Records += 3
	}
	return ts
}

// mustDriver returns a driver whose Run runs until ctx ends.
func mustDriver(t *testing.T, ctx context.Context, cfg core.CoreConfig, ts *core.TaskSet, store Store, eval Evaluator, clock Clock) *Driver {
	t.Helper()
	d, err := NewDriver(ctx, cfg, ts, store, eval, clock, nil)
	if err != nil {
		t.Fatalf("NewDriver: %v", err)
	}
	go d.Run(ctx)
	return d
}

func metaOf(d *Driver) core.Meta {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.core.Meta()
}

func countsOf(d *Driver) core.Counts {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.core.Counts()
}

func statusesOf(d *Driver) []core.TaskStatus {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.core.Statuses()
}

// waitCore waits (without polling) until cond holds on c.
func waitCore(t *testing.T, c *Driver, what string, cond func(m core.Meta) bool) {
	t.Helper()
	timeout := time.After(5 * time.Second)
	for {
		ch := c.Changed()
		if cond(metaOf(c)) {
			return
		}
		select {
		case <-ch:
		case <-timeout:
			t.Fatalf("timed out waiting for %s; meta %+v", what, metaOf(c))
		}
	}
}

// setLongPoll changes the core's long poll; call it only while no request runs.
func setLongPoll(d *Driver, poll time.Duration) { d.longPoll = poll }

// flush returns once every change made so far is saved, including those an
// end-of-pass goroutine is still saving.
func flush(t *testing.T, d *Driver) {
	t.Helper()
	d.mu.Lock()
	gen := d.dirty
	d.mu.Unlock()
	if err := d.commit(context.Background(), gen); err != nil {
		t.Fatal(err)
	}
}

func statusOf(d *Driver, id int) core.TaskStatus {
	d.mu.Lock()
	defer d.mu.Unlock()
	st, _ := d.core.TaskStatus(id)
	return st
}

func memStatus(m *MemStore, id int) core.TaskStatus {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.statuses[id]
}

func storedState(t *testing.T, s *MemStore) (*core.Meta, map[int]core.TaskStatus) {
	t.Helper()
	meta, sts, err := s.Load(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	out := map[int]core.TaskStatus{}
	for _, st := range sts {
		out[st.ID] = st
	}
	return meta, out
}

func saves(s *MemStore) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.Saves
}

// --- sync --------------------------------------------------------------------

// epoch0 is the sync epoch of a job that never rolled back, as in all these tests.
const epoch0 int64 = 0

func mustGetStep(t *testing.T, c *Driver, trainer int, step int64) core.Work {
	t.Helper()
	w, err := c.GetStep(context.Background(), trainer, step, epoch0)
	if err != nil {
		t.Fatalf("GetStep(trainer %d, step %d): %v", trainer, step, err)
	}
	if w.Status != api.WorkStatus_WORK_READY {
		t.Fatalf("GetStep(trainer %d, step %d) = %v, want READY", trainer, step, w.Status)
	}
	if w.Epoch != epoch0 {
		t.Fatalf("GetStep(trainer %d, step %d) in epoch %d, want %d", trainer, step, w.Epoch, epoch0)
	}
	return w
}

func mustStepDone(t *testing.T, c *Driver, trainer int, step int64, records int) {
	t.Helper()
	if err := c.StepDone(context.Background(), trainer, trainer, step, epoch0, 2*float64(records), int64(records)); err != nil {
		t.Fatalf("StepDone(trainer %d, step %d): %v", trainer, step, err)
	}
}

// runSyncSteps has every trainer compute and report steps [from, to) in
// order, as the trainers of a healthy job do; it returns the records read.
func runSyncSteps(t *testing.T, c *Driver, from, to int64) []core.RecordRef {
	t.Helper()
	var got []core.RecordRef
	for s := from; s < to; s++ {
		var checkpoint []bool
		for k := 0; k < c.core.Config().Trainers; k++ {
			w := mustGetStep(t, c, k, s)
			if w.Step != s {
				t.Fatalf("GetStep(trainer %d, step %d) answered step %d", k, s, w.Step)
			}
			// Every pserver must snapshot the same steps.
			if checkpoint = append(checkpoint, w.Checkpoint); w.Checkpoint != checkpoint[0] {
				t.Fatalf("step %d: checkpoint flag %v for trainer 0, %v for trainer %d", s, checkpoint[0], w.Checkpoint, k)
			}
			recs := core.SliceRecords(w.Slices)
			if len(recs) > c.core.Config().Batch {
				t.Fatalf("step %d trainer %d got %d records > batch %d", s, k, len(recs), c.core.Config().Batch)
			}
			got = append(got, recs...)
			mustStepDone(t, c, k, s, len(recs))
		}
		if m := metaOf(c); m.Step != s+1 {
			t.Fatalf("after every trainer reported step %d, meta.Step = %d, want %d", s, m.Step, s+1)
		}
	}
	return got
}

func checkCoversOnce(t *testing.T, ts *core.TaskSet, got []core.RecordRef, what string) {
	t.Helper()
	want := core.AllRecords(ts)
	seen := map[core.RecordRef]bool{}
	for _, r := range got {
		if !want[r] {
			t.Fatalf("%s: record %+v is not in the training set", what, r)
		}
		if seen[r] {
			t.Fatalf("%s: record %+v computed twice", what, r)
		}
		seen[r] = true
	}
	if len(seen) != len(want) {
		t.Fatalf("%s: %d records computed, training set has %d", what, len(seen), len(want))
	}
}

func TestDriverSyncRunsEveryPassExactlyOnce(t *testing.T) {
	ts := core.FixtureTaskSet()
	const trainers, batch, passes = 3, 4, 3
	// 42 records, 12 per step: 4 steps, the last one reaches trainers 0 and 1 only.
	const stepsPerPass = 4
	store, eval := &MemStore{}, &fakeEvaluator{}
	c := mustDriver(t, t.Context(), core.FixtureSyncConfig(trainers, batch, passes), ts, store, eval, newFakeClock())

	var orders [][]core.RecordRef
	for pass := range passes {
		m := metaOf(c)
		start := int64(pass * stepsPerPass)
		if m.Pass != pass || m.Step != start || m.PassStartStep != start || m.PassSamples != 0 {
			t.Fatalf("pass %d starts with meta %+v, want pass %d step %d", pass, m, pass, start)
		}
		got := runSyncSteps(t, c, start, start+stepsPerPass-1)
		if w := mustGetStep(t, c, 2, start+stepsPerPass-1); len(w.Slices) != 0 || w.Pass != pass {
			t.Fatalf("last step of pass %d for trainer 2 = %+v, want pass %d and no records", pass, w, pass)
		}
		got = append(got, runSyncSteps(t, c, start+stepsPerPass-1, start+stepsPerPass)...)
		checkCoversOnce(t, ts, got, fmt.Sprintf("pass %d", pass))
		orders = append(orders, got)

		waitCore(t, c, fmt.Sprintf("end of pass %d", pass), func(m core.Meta) bool { return m.Pass == pass+1 })
		if calls := eval.Calls(); len(calls) != pass+1 || calls[pass] != (evalCall{pass, start + stepsPerPass}) {
			t.Fatalf("evaluator calls %+v, want call %d = pass %d at step %d", calls, pass, pass, start+stepsPerPass)
		}
		m = metaOf(c)
		if len(m.SamplesApplied) != pass+1 || m.SamplesApplied[pass] != int64(ts.Records) || m.PassSamples != 0 {
			t.Fatalf("after pass %d: samples_applied %v pass_samples %d, want [.. %d] and 0", pass, m.SamplesApplied, m.PassSamples, ts.Records)
		}
		if m.Metrics.TrainLoss == nil || *m.Metrics.TrainLoss != 2 || m.Metrics.TestLoss == nil || *m.Metrics.TestLoss != 100+float64(pass) {
			t.Fatalf("after pass %d: metrics %+v, want train loss 2 and test loss %d", pass, m.Metrics, 100+pass)
		}
	}
	for p := 1; p < passes; p++ {
		if slices.Equal(orders[p], orders[p-1]) {
			t.Fatalf("passes %d and %d read the records in the same order", p-1, p)
		}
	}

	for k := range trainers {
		w, err := c.GetStep(context.Background(), k, 0, epoch0)
		if err != nil || w.Status != api.WorkStatus_WORK_DONE || w.Pass != passes {
			t.Fatalf("GetStep after the last pass = %+v, %v; want DONE pass %d", w, err, passes)
		}
	}
	flush(t, c)
	if !c.Done() { // done once the last pass is saved
		t.Fatal("Done() = false after the last pass was saved")
	}
	meta, sts := storedState(t, store)
	if !meta.Done || !slices.Equal(meta.SamplesApplied, []int64{42, 42, 42}) || meta.Step != passes*stepsPerPass {
		t.Fatalf("stored meta %+v, want done, samples [42 42 42], step %d", meta, passes*stepsPerPass)
	}
	for id, st := range sts {
		if st.State != core.Done {
			t.Fatalf("stored task %d is %s after training, want done", id, st.State)
		}
	}
	store.mu.Lock()
	prog := store.Progress
	store.mu.Unlock()
	if prog == nil || prog.Pass != passes || prog.Passes != passes || !slices.Equal(prog.SamplesApplied, []int64{42, 42, 42}) ||
		prog.Tasks.Done != len(ts.Tasks) || prog.ModelDir != "/models/x" {
		t.Fatalf("stored progress %+v", store.Progress)
	}
	if n := len(eval.Calls()); n != passes {
		t.Fatalf("evaluator called %d times, want %d", n, passes)
	}
}

func TestDriverSyncStepReports(t *testing.T) {
	ts := core.FixtureTaskSet()
	store := &MemStore{}
	c := mustDriver(t, t.Context(), core.FixtureSyncConfig(3, 4, 1), ts, store, &fakeEvaluator{}, newFakeClock())
	ctx := context.Background()

	rec := map[[2]int64]int{} // (trainer, step) -> records
	for s := int64(0); s < 2; s++ {
		for k := range 3 {
			rec[[2]int64{int64(k), s}] = len(core.SliceRecords(mustGetStep(t, c, k, s).Slices))
		}
	}
	step0 := rec[[2]int64{0, 0}] + rec[[2]int64{1, 0}] + rec[[2]int64{2, 0}]
	step1 := rec[[2]int64{0, 1}] + rec[[2]int64{1, 1}] + rec[[2]int64{2, 1}]
	if step0 != 12 || step1 != 12 {
		t.Fatalf("steps 0 and 1 hold %d and %d records, want 12 each", step0, step1)
	}
	savesBefore := saves(store)

	// Trainer 0 runs one step ahead of its peers: accepted, held back.
	mustStepDone(t, c, 0, 0, rec[[2]int64{0, 0}])
	mustStepDone(t, c, 0, 1, rec[[2]int64{0, 1}])
	if err := c.StepDone(ctx, 0, 0, 2, epoch0, 0, 4); !errors.Is(err, core.ErrBadStep) {
		t.Fatalf("report two steps ahead: %v, want core.ErrBadStep", err)
	}
	if m := metaOf(c); m.Step != 0 || m.PassSamples != 0 || saves(store) != savesBefore {
		t.Fatalf("after partial reports: step %d samples %d saves %d, want nothing committed", m.Step, m.PassSamples, saves(store)-savesBefore)
	}
	mustStepDone(t, c, 1, 0, rec[[2]int64{1, 0}])
	mustStepDone(t, c, 2, 0, rec[[2]int64{2, 0}])
	if m := metaOf(c); m.Step != 1 || m.PassSamples != int64(step0) || m.PassLossSum != 2*float64(step0) {
		t.Fatalf("after step 0: meta %+v, want step 1, %d samples", m, step0)
	}
	// A step commit is saved in the background, not on the step's path.
	if saves(store) != savesBefore {
		t.Fatalf("commit of step 0 made %d saves at once, want 0 (deferred)", saves(store)-savesBefore)
	}
	if err := c.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if saves(store) != savesBefore+1 {
		t.Fatalf("flushing the commit of step 0 made %d saves, want 1", saves(store)-savesBefore)
	}
	checkStoredAfterStep0(t, c, store)
	mustStepDone(t, c, 1, 1, rec[[2]int64{1, 1}])
	if m := metaOf(c); m.Step != 1 {
		t.Fatalf("step 1 committed with 2 of 3 reports: meta.Step %d", m.Step)
	}
	mustStepDone(t, c, 2, 1, rec[[2]int64{2, 1}])
	m := metaOf(c)
	if m.Step != 2 || m.PassSamples != int64(step0+step1) {
		t.Fatalf("after step 1: meta %+v, want step 2, %d samples", m, step0+step1)
	}

	checkSyncRepeatsAndRefusals(t, c, store)
}

// checkStoredAfterStep0 checks that the tasks step 0 read into are stored in
// flight, those it read to the end done, and no other.
func checkStoredAfterStep0(t *testing.T, c *Driver, store *MemStore) {
	t.Helper()
	started, finished := c.core.Plan().TasksTouched(0)
	_, sts := storedState(t, store)
	for _, id := range started {
		want := core.Pending
		if slices.Contains(finished, id) {
			want = core.Done
		}
		if sts[id].State != want {
			t.Fatalf("stored task %d after step 0 is %s, want %s", id, sts[id].State, want)
		}
	}
	var inFlight int
	for _, st := range sts {
		if st.State != core.Todo {
			inFlight++
		}
	}
	if inFlight != len(started) || len(started) == 0 {
		t.Fatalf("after step 0, %d tasks stored as begun, want the %d step 0 read", inFlight, len(started))
	}
}

// checkSyncRepeatsAndRefusals (steps 0 and 1 of 4 committed) checks that
// repeated reports change nothing and bad requests are refused.
func checkSyncRepeatsAndRefusals(t *testing.T, c *Driver, store *MemStore) {
	t.Helper()
	ctx := context.Background()
	m := metaOf(c)
	savesBefore := saves(store)
	for _, s := range []int64{0, 1} {
		if err := c.StepDone(ctx, 1, 1, s, epoch0, 999, 999); err != nil {
			t.Fatalf("repeated report of committed step %d: %v", s, err)
		}
	}
	if got := metaOf(c); !reflect.DeepEqual(got, m) || saves(store) != savesBefore {
		t.Fatalf("repeated reports changed the state: %+v -> %+v, %d saves", m, got, saves(store)-savesBefore)
	}
	// A restarted trainer asking for a committed step gets the current one.
	w, err := c.GetStep(ctx, 1, 0, epoch0)
	if err != nil || w.Step != 2 || !reflect.DeepEqual(w.Slices, mustGetStep(t, c, 1, 2).Slices) {
		t.Fatalf("GetStep(1, 0) at step 2 = %+v, %v; want step 2's slices", w, err)
	}

	// One step ahead is refused when it lies past the pass (4 steps here).
	runSyncSteps(t, c, 2, 3)
	if err := c.StepDone(ctx, 0, 0, 4, epoch0, 0, 0); !errors.Is(err, core.ErrBadStep) {
		t.Fatalf("report of step 4 at step 3, the pass's last: %v, want core.ErrBadStep", err)
	}

	for _, k := range []int{-1, 3} {
		if _, err := c.GetStep(ctx, k, 2, epoch0); !errors.Is(err, core.ErrBadTrainer) {
			t.Fatalf("GetStep(trainer %d): %v, want core.ErrBadTrainer", k, err)
		}
		if err := c.StepDone(ctx, k, k, 2, epoch0, 0, 0); !errors.Is(err, core.ErrBadTrainer) {
			t.Fatalf("StepDone(trainer %d): %v, want core.ErrBadTrainer", k, err)
		}
	}
}

func TestDriverSyncWaitsForTheEndOfPass(t *testing.T) {
	ts := core.FixtureTaskSet()
	cfg := core.FixtureSyncConfig(3, 4, 2)
	cfg.LongPoll = 5 * time.Millisecond
	eval := &fakeEvaluator{gate: make(chan struct{})}
	c := mustDriver(t, t.Context(), cfg, ts, &MemStore{}, eval, newFakeClock())
	ctx := context.Background()

	// A step beyond the pass is not handed out: with the last step's
	// micro-batches held, WAIT after the long poll.
	runSyncSteps(t, c, 0, 3)
	held := map[int]core.Work{}
	for k := range 3 {
		held[k] = mustGetStep(t, c, k, 3)
	}
	mustStepDone(t, c, 0, 3, len(core.SliceRecords(held[0].Slices)))
	begin := time.Now()
	w, err := c.GetStep(ctx, 0, 4, epoch0)
	if err != nil || w.Status != api.WorkStatus_WORK_WAIT || w.Step != 3 {
		t.Fatalf("GetStep past the pass = %+v, %v; want WAIT at step 3", w, err)
	}
	if waited := time.Since(begin); waited < cfg.LongPoll {
		t.Fatalf("WAIT after %s, before the long poll of %s", waited, cfg.LongPoll)
	}

	for k := 1; k < 3; k++ {
		mustStepDone(t, c, k, 3, len(core.SliceRecords(held[k].Slices)))
	}
	// The evaluator holds the pass end: trainers wait, the next pass is not planned.
	w, err = c.GetStep(ctx, 1, 4, epoch0)
	if err != nil || w.Status != api.WorkStatus_WORK_WAIT {
		t.Fatalf("GetStep during evaluation = %+v, %v; want WAIT", w, err)
	}
	if err := c.StepDone(ctx, 1, 1, 4, epoch0, 0, 4); !errors.Is(err, core.ErrBadStep) {
		t.Fatalf("report of the next pass's first step during evaluation: %v, want core.ErrBadStep", err)
	}
	if calls := eval.Calls(); !slices.Equal(calls, []evalCall{{0, 4}}) {
		t.Fatalf("evaluator calls %+v, want pass 0 at step 4", calls)
	}

	// A long-polling trainer hears of the next pass as soon as it is planned.
	setLongPoll(c, 5*time.Second)
	got := make(chan core.Work, 1)
	go func() {
		w, _ := c.GetStep(ctx, 1, 4, epoch0)
		got <- w
	}()
	eval.gate <- struct{}{}
	select {
	case w := <-got:
		if w.Status != api.WorkStatus_WORK_READY || w.Pass != 1 || w.Step != 4 {
			t.Fatalf("long-polled GetStep = %+v, want READY pass 1 step 4", w)
		}
	case <-time.After(3 * time.Second):
		t.Fatal("long-polled GetStep did not return after the pass ended")
	}
}

func TestDriverSyncHandsOutTheNextPassOnlyOnceThePassEndIsSaved(t *testing.T) {
	// endPass switches to the next pass's plan, then saves. GetStep must not
	// hand out the new pass's first step before that save is durable: a master
	// dying in between would be replaced by one that evaluates the old pass
	// again (Pull waits for "at least" the step, so after trainers may have
	// applied a step of the next pass) and writes that into the pass's model.
	w := getStepAfterSlowPassEnd(t, 2, api.WorkStatus_WORK_READY)
	if w.Pass != 1 || w.Step != 4 {
		t.Fatalf("GetStep after the pass end was saved = %+v, want pass 1 step 4", w)
	}
}

func TestDriverSyncSaysDoneOnlyOnceTheEndIsSaved(t *testing.T) {
	// The same for the last pass: a trainer told the job is done exits for
	// good. Were the master to die before the end is durable (etcd paused,
	// say), its successor would roll the unfinished job back and wait for
	// trainers that no longer exist (a soak run in CI hung so).
	getStepAfterSlowPassEnd(t, 1, api.WorkStatus_WORK_DONE)
}

// endPassWithSaveHeld lets the pass end's evaluation (gated by eval) finish
// and returns once its save has entered store, held there until
// store.release().
func endPassWithSaveHeld(t *testing.T, store *gatedStore, eval *fakeEvaluator) {
	t.Helper()
	store.arm()
	eval.gate <- struct{}{}
	select {
	case <-store.entered:
	case <-time.After(5 * time.Second):
		t.Fatal("the pass end was never saved")
	}
}

// getStepAfterSlowPassEnd runs pass 0 of a job of passes passes, then asks
// for step 4 while the pass end's save blocks: it fails the test if GetStep
// answers want before the save is released, or anything else after. It
// returns the answer.
func getStepAfterSlowPassEnd(t *testing.T, passes int, want api.WorkStatus) core.Work {
	t.Helper()
	ts := core.FixtureTaskSet()
	cfg := core.FixtureSyncConfig(3, 4, passes)
	cfg.LongPoll = 20 * time.Millisecond
	store := newGatedStore()
	eval := &fakeEvaluator{gate: make(chan struct{})}
	c := mustDriver(t, t.Context(), cfg, ts, store, eval, newFakeClock())
	runSyncSteps(t, c, 0, 4)
	endPassWithSaveHeld(t, store, eval)
	got := make(chan core.Work, 1)
	go func() {
		w, _ := c.GetStep(context.Background(), 0, 4, epoch0)
		got <- w
	}()
	early := false
	select {
	case w := <-got:
		early = w.Status == want
		got <- w
	case <-time.After(3 * cfg.LongPoll):
	}
	store.release()
	if early {
		t.Fatalf("GetStep answered %v while the end of pass 0 was still being saved", want)
	}
	w := <-got
	if w.Status != want {
		w = mustGetStep(t, c, 0, 4)
	}
	if w.Status != want {
		t.Fatalf("GetStep after the end of pass 0 was saved = %+v, want %v", w, want)
	}
	if m, _ := storedState(t, store.MemStore); m.Pass != 1 {
		t.Fatalf("GetStep answered %v, but the stored state is at pass %d, not 1", want, m.Pass)
	}
	return w
}

// --- async -------------------------------------------------------------------

func mustGetTask(t *testing.T, c *Driver, trainer, finished int, records int) core.Work {
	t.Helper()
	w, err := c.GetTask(context.Background(), trainer, finished, -1, 2*float64(records), int64(records))
	if err != nil {
		t.Fatalf("GetTask(trainer %d, finished %d): %v", trainer, finished, err)
	}
	return w
}

func mustReady(t *testing.T, w core.Work) core.Task {
	t.Helper()
	if w.Status != api.WorkStatus_WORK_READY {
		t.Fatalf("got %+v, want READY", w)
	}
	return w.Task
}

// driveAsync has trainers finish what they hold and take more, round robin,
// until every trainer heard DONE. It returns, per pass, the tasks finished.
func driveAsync(t *testing.T, c *Driver, held map[int]*core.Task) map[int][]int {
	t.Helper()
	finished := map[int][]int{}
	passOf := map[int]int{} // task -> pass it was handed out in
	for _, tk := range held {
		if tk != nil {
			passOf[tk.ID] = metaOf(c).Pass
		}
	}
	done := map[int]bool{}
	for iter := 0; len(done) < c.core.Config().Trainers; iter++ {
		if iter > 10000 {
			t.Fatalf("async job did not finish; meta %+v", metaOf(c))
		}
		for k := 0; k < c.core.Config().Trainers; k++ {
			if done[k] {
				continue
			}
			fin, recs := -1, 0
			if tk := held[k]; tk != nil {
				fin, recs = tk.ID, tk.Records
				finished[passOf[tk.ID]] = append(finished[passOf[tk.ID]], tk.ID)
			}
			w := mustGetTask(t, c, k, fin, recs)
			held[k] = nil
			switch w.Status {
			case api.WorkStatus_WORK_READY:
				tk := w.Task
				held[k] = &tk
				passOf[tk.ID] = w.Pass
			case api.WorkStatus_WORK_DONE:
				if w.Pass != c.core.Config().Passes {
					t.Fatalf("DONE with pass %d, want %d", w.Pass, c.core.Config().Passes)
				}
				done[k] = true
			case api.WorkStatus_WORK_WAIT:
			default:
				t.Fatalf("GetTask status %v", w.Status)
			}
		}
	}
	return finished
}

func checkEveryTaskOnce(t *testing.T, ts *core.TaskSet, ids []int, what string) {
	t.Helper()
	got := slices.Sorted(slices.Values(ids))
	var want []int
	for _, tk := range ts.Tasks {
		want = append(want, tk.ID)
	}
	sort.Ints(want)
	if !slices.Equal(got, want) {
		t.Fatalf("%s finished tasks %v, want each of %v once", what, got, want)
	}
}

func TestDriverAsyncDispatchTimeoutLossAndPasses(t *testing.T) {
	ts := core.FixtureTaskSet()
	clock := newFakeClock()
	store, eval := &MemStore{}, &fakeEvaluator{}
	cfg := core.FixtureAsyncConfig(2, 4, 2)
	c := mustDriver(t, t.Context(), cfg, ts, store, eval, clock)
	ctx := context.Background()

	a := mustReady(t, mustGetTask(t, c, 0, -1, 0))
	b := mustReady(t, mustGetTask(t, c, 1, -1, 0))
	if a.ID == b.ID {
		t.Fatalf("both trainers got task %d", a.ID)
	}
	if n := countsOf(c); n != (core.Counts{Todo: 4, Pending: 2}) {
		t.Fatalf("counts after two dispatches %+v", n)
	}
	_, sts := storedState(t, store)
	if st := sts[a.ID]; st.State != core.Pending || st.Trainer != 0 || !st.Deadline.Equal(clock.Now().Add(cfg.Queue.Timeout)) {
		t.Fatalf("stored status of task %d: %+v, want pending for trainer 0 until now+timeout", a.ID, st)
	}

	checkTimeoutsRequeue(t, c, store, clock, a.ID, b.ID)
	first, second := min(a.ID, b.ID), max(a.ID, b.ID)
	checkLostTrainerAndFailure(t, c, store, second)

	firstTask, secondTask := a, b
	if firstTask.ID != first {
		firstTask, secondTask = b, a
	}
	finished := driveAsync(t, c, map[int]*core.Task{0: &firstTask, 1: &secondTask})
	flush(t, c)
	for pass := range 2 {
		checkEveryTaskOnce(t, ts, finished[pass], fmt.Sprintf("pass %d", pass))
	}
	// 8,4,10,6,6,8 records in batches of 4: 2+1+3+2+2+2 = 12 minibatches a pass.
	if calls := eval.Calls(); !slices.Equal(calls, []evalCall{{0, 12}, {1, 24}}) {
		t.Fatalf("evaluator calls %+v, want pass 0 at step 12 and pass 1 at step 24", calls)
	}
	meta, _ := storedState(t, store)
	if !meta.Done || meta.Pass != 2 || meta.Step != 24 || !slices.Equal(meta.SamplesApplied, []int64{42, 42}) {
		t.Fatalf("stored meta at the end %+v, want done, step 24, samples [42 42]", meta)
	}
	if meta.Metrics.TrainLoss == nil || *meta.Metrics.TrainLoss != 2 || meta.Metrics.TestLoss == nil || *meta.Metrics.TestLoss != 101 {
		t.Fatalf("stored metrics %+v, want train loss 2, test loss 101", meta.Metrics)
	}
	w, err := c.GetTask(ctx, 0, -1, -1, 0, 0)
	if err != nil || w.Status != api.WorkStatus_WORK_DONE {
		t.Fatalf("GetTask after training = %+v, %v; want DONE", w, err)
	}
	if err := c.Tick(ctx); err != nil {
		t.Fatalf("Tick after training: %v", err)
	}
}

// checkTimeoutsRequeue checks that tasks a and b (trainers 0 and 1 hold them)
// come back after their deadline, not before, and go out again first.
func checkTimeoutsRequeue(t *testing.T, c *Driver, store *MemStore, clock *fakeClock, a, b int) {
	t.Helper()
	ctx := context.Background()
	timeout := c.core.Config().Queue.Timeout
	// Nothing expires before the deadline; both tasks come back after it.
	clock.Advance(timeout - time.Second)
	if err := c.Tick(ctx); err != nil {
		t.Fatal(err)
	}
	if n := countsOf(c); n.Pending != 2 {
		t.Fatalf("Tick before the deadline took tasks back: %+v", n)
	}
	clock.Advance(time.Second)
	if err := c.Tick(ctx); err != nil {
		t.Fatal(err)
	}
	if n := countsOf(c); n != (core.Counts{Todo: 6}) {
		t.Fatalf("counts after the deadline %+v, want all 6 todo", n)
	}
	_, sts := storedState(t, store)
	for _, id := range []int{a, b} {
		if st := sts[id]; st.State != core.Todo || st.Failures != 1 || st.Trainer != core.NoTrainer {
			t.Fatalf("stored status of timed-out task %d: %+v, want todo with one failure", id, st)
		}
	}
	// Re-queued tasks go first, lowest ID first.
	first, second := min(a, b), max(a, b)
	if got := mustReady(t, mustGetTask(t, c, 0, -1, 0)); got.ID != first {
		t.Fatalf("trainer 0 got task %d after the timeout, want re-queued task %d", got.ID, first)
	}
	if got := mustReady(t, mustGetTask(t, c, 1, -1, 0)); got.ID != second {
		t.Fatalf("trainer 1 got task %d after the timeout, want re-queued task %d", got.ID, second)
	}
}

// checkLostTrainerAndFailure checks that trainer 1's task second returns at
// once when the trainer is lost, and to the front when it fails.
func checkLostTrainerAndFailure(t *testing.T, c *Driver, store *MemStore, second int) {
	t.Helper()
	ctx := context.Background()
	// A lost trainer's task returns at once, with no failure counted.
	if err := c.TrainerLost(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if n := countsOf(c); n != (core.Counts{Todo: 5, Pending: 1}) {
		t.Fatalf("counts after TrainerLost(1) %+v", n)
	}
	_, sts := storedState(t, store)
	if st := sts[second]; st.State != core.Todo || st.Failures != 1 {
		t.Fatalf("stored status of the lost trainer's task: %+v, want todo, failures still 1", st)
	}
	if err := c.TrainerLost(ctx, 1); err != nil {
		t.Fatalf("TrainerLost of a trainer holding nothing: %v", err)
	}
	// Its replacement picks the task up again; a failure puts it back in front.
	if got := mustReady(t, mustGetTask(t, c, 1, -1, 0)); got.ID != second {
		t.Fatalf("replacement trainer got task %d, want %d", got.ID, second)
	}
	w, err := c.GetTask(ctx, 1, -1, second, 0, 0)
	if err != nil || w.Status != api.WorkStatus_WORK_READY || w.Task.ID != second {
		t.Fatalf("GetTask after failing task %d = %+v, %v; want the same task back", second, w, err)
	}
	if st := memStatus(store, second); st.State != core.Pending || st.Failures != 2 {
		t.Fatalf("stored failures of task %d = %d, want 2", second, st.Failures)
	}
	if m := metaOf(c); m.PassSamples != 0 || m.Step != 0 {
		t.Fatalf("samples counted without a finished task: %+v", m)
	}
}

func TestDriverAsyncWaitAndWakeUp(t *testing.T) {
	ts := manyTaskSet(1)
	c := mustDriver(t, t.Context(), core.FixtureAsyncConfig(2, 4, 1), ts, &MemStore{}, &fakeEvaluator{}, newFakeClock())
	ctx := context.Background()
	only := mustReady(t, mustGetTask(t, c, 0, -1, 0))

	begin := time.Now()
	w, err := c.GetTask(ctx, 1, -1, -1, 0, 0)
	if err != nil || w.Status != api.WorkStatus_WORK_WAIT {
		t.Fatalf("GetTask with every task pending = %+v, %v; want WAIT", w, err)
	}
	if time.Since(begin) < c.core.Config().LongPoll {
		t.Fatalf("WAIT before the long poll of %s", c.core.Config().LongPoll)
	}
	if _, err := c.GetTask(ctx, 2, -1, -1, 0, 0); !errors.Is(err, core.ErrBadTrainer) {
		t.Fatalf("GetTask(trainer 2 of 2): %v, want core.ErrBadTrainer", err)
	}

	// A trainer long-polling gets the task its peer loses.
	setLongPoll(c, 5*time.Second)
	got := make(chan core.Work, 1)
	go func() {
		w, _ := c.GetTask(ctx, 1, -1, -1, 0, 0)
		got <- w
	}()
	if err := c.TrainerLost(ctx, 0); err != nil {
		t.Fatal(err)
	}
	select {
	case w := <-got:
		if w.Status != api.WorkStatus_WORK_READY || w.Task.ID != only.ID {
			t.Fatalf("long-polling trainer got %+v, want task %d", w, only.ID)
		}
	case <-time.After(3 * time.Second):
		t.Fatal("long-polling trainer did not get the released task")
	}
}

func TestDriverAsyncSaysDoneOnlyOnceTheEndIsSaved(t *testing.T) {
	// As TestDriverSyncSaysDoneOnlyOnceTheEndIsSaved: the end of the last pass
	// is saved by endPass, not by the GetTask that hears DONE, and must be
	// durable before a trainer exits for good.
	ts := manyTaskSet(1)
	store := newGatedStore()
	eval := &fakeEvaluator{gate: make(chan struct{})}
	c := mustDriver(t, t.Context(), core.FixtureAsyncConfig(1, 4, 1), ts, store, eval, newFakeClock())
	only := mustReady(t, mustGetTask(t, c, 0, -1, 0))
	if w := mustGetTask(t, c, 0, only.ID, only.Records); w.Status != api.WorkStatus_WORK_WAIT {
		t.Fatalf("GetTask while the last pass is evaluated = %+v, want WAIT", w)
	}
	endPassWithSaveHeld(t, store, eval)
	setLongPoll(c, 5*time.Second)
	got := make(chan core.Work, 1)
	go func() {
		w, _ := c.GetTask(context.Background(), 0, -1, -1, 0, 0)
		got <- w
	}()
	select {
	case w := <-got:
		store.release()
		t.Fatalf("GetTask answered %+v while the job's end was still being saved", w)
	case <-time.After(100 * time.Millisecond):
	}
	store.release()
	select {
	case w := <-got:
		if w.Status != api.WorkStatus_WORK_DONE {
			t.Fatalf("GetTask after the job's end was saved = %+v, want DONE", w)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("GetTask did not answer once the job's end was saved")
	}
	if m, _ := storedState(t, store.MemStore); !m.Done {
		t.Fatal("DONE answered, but the stored state is not done")
	}
}

func TestDriverAsyncLateFinishStillCounts(t *testing.T) {
	// At-least-once: a finish after the task was taken back still counts its
	// records (the gradients were applied) and does not take the task back
	// from its new holder.
	ts := manyTaskSet(2)
	clock := newFakeClock()
	cfg := core.FixtureAsyncConfig(2, 2, 1)
	c := mustDriver(t, t.Context(), cfg, ts, &MemStore{}, &fakeEvaluator{}, clock)
	a := mustReady(t, mustGetTask(t, c, 0, -1, 0))
	clock.Advance(cfg.Queue.Timeout)
	if err := c.Tick(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := mustReady(t, mustGetTask(t, c, 1, -1, 0)); got.ID != a.ID {
		t.Fatalf("trainer 1 got %d, want the timed-out task %d", got.ID, a.ID)
	}
	b := mustReady(t, mustGetTask(t, c, 0, a.ID, a.Records))
	if st := statusOf(c, a.ID); st.State != core.Pending || st.Trainer != 1 {
		t.Fatalf("late finish took task %d from its new holder: %+v", a.ID, st)
	}
	if m := metaOf(c); m.PassSamples != int64(a.Records) || m.Step != 2 {
		t.Fatalf("after a late finish: meta %+v, want %d samples, step 2", m, a.Records)
	}
	if b.ID == a.ID {
		t.Fatalf("trainer 0 got task %d again", b.ID)
	}
}

// --- restore -----------------------------------------------------------------

func TestDriverSyncRestoreContinuesWhereTheOldMasterStopped(t *testing.T) {
	ts := core.FixtureTaskSet()
	cfg := core.FixtureSyncConfig(3, 4, 3)
	store := &MemStore{}
	old := mustDriver(t, t.Context(), cfg, ts, store, &fakeEvaluator{}, newFakeClock())
	runSyncSteps(t, old, 0, 4)
	waitCore(t, old, "end of pass 0", func(m core.Meta) bool { return m.Pass == 1 })
	runSyncSteps(t, old, 4, 6) // two of pass 1's four steps
	if err := old.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}

	// What the old master would have handed out for the rest of pass 1.
	want := map[[2]int64][]core.Slice{}
	for s := int64(6); s < 8; s++ {
		for k := range 3 {
			want[[2]int64{int64(k), s}] = mustGetStep(t, old, k, s).Slices
		}
	}
	oldMeta, oldStatuses := metaOf(old), statusesOf(old)

	eval := &fakeEvaluator{}
	c := mustDriver(t, t.Context(), cfg, ts, store, eval, newFakeClock())
	if m := metaOf(c); !reflect.DeepEqual(m, oldMeta) {
		t.Fatalf("restored meta %+v, want %+v", m, oldMeta)
	}
	if !reflect.DeepEqual(statusesOf(c), oldStatuses) {
		t.Fatalf("restored statuses %+v, want %+v", statusesOf(c), oldStatuses)
	}
	if w := mustGetStep(t, c, 0, 0); w.Step != 6 || w.Pass != 1 {
		t.Fatalf("restored master hands out %+v, want pass 1 step 6", w)
	}
	for key, sl := range want {
		if got := mustGetStep(t, c, int(key[0]), key[1]).Slices; !reflect.DeepEqual(got, sl) {
			t.Fatalf("restored plan for trainer %d step %d = %+v, old master's %+v", key[0], key[1], got, sl)
		}
	}
	runSyncSteps(t, c, 6, 8)
	waitCore(t, c, "end of pass 1", func(m core.Meta) bool { return m.Pass == 2 })
	runSyncSteps(t, c, 8, 12)
	waitCore(t, c, "end of training", func(m core.Meta) bool { return m.Done })
	if m := metaOf(c); !slices.Equal(m.SamplesApplied, []int64{42, 42, 42}) {
		t.Fatalf("samples_applied %v across a master change, want [42 42 42]", m.SamplesApplied)
	}
	if calls := eval.Calls(); !slices.Equal(calls, []evalCall{{1, 8}, {2, 12}}) {
		t.Fatalf("restored master's evaluator calls %+v, want passes 1 and 2", calls)
	}
}

func TestDriverSyncRestoreFinishesAnInterruptedPassEnd(t *testing.T) {
	// The old master committed the pass's last step but died evaluating it:
	// the new one evaluates the same pass at the same step and goes on.
	ts := core.FixtureTaskSet()
	cfg := core.FixtureSyncConfig(3, 4, 2)
	store := &MemStore{}
	ctxOld, stopOld := context.WithCancel(t.Context())
	defer stopOld()
	stuck := &fakeEvaluator{gate: make(chan struct{})}
	old := mustDriver(t, ctxOld, cfg, ts, store, stuck, newFakeClock())
	runSyncSteps(t, old, 0, 4)

	eval := &fakeEvaluator{}
	c := mustDriver(t, t.Context(), cfg, ts, store, eval, newFakeClock())
	waitCore(t, c, "end of pass 0", func(m core.Meta) bool { return m.Pass == 1 })
	stopOld()
	if calls := eval.Calls(); !slices.Equal(calls, []evalCall{{0, 4}}) {
		t.Fatalf("new master's evaluator calls %+v, want pass 0 at step 4", calls)
	}
	if m := metaOf(c); !slices.Equal(m.SamplesApplied, []int64{42}) || m.PassStartStep != 4 {
		t.Fatalf("after the re-run pass end: %+v", m)
	}
	checkCoversOnce(t, ts, runSyncSteps(t, c, 4, 8), "pass 1 after restore")
}

func TestDriverAsyncRestoreContinuesWhereTheOldMasterStopped(t *testing.T) {
	ts := core.FixtureTaskSet()
	clock := newFakeClock()
	cfg := core.FixtureAsyncConfig(3, 4, 2)
	store := &MemStore{}
	old := mustDriver(t, t.Context(), cfg, ts, store, &fakeEvaluator{}, clock)
	// Trainer 1 takes y first (so y's deadline is the earliest), then vanishes.
	y := mustReady(t, mustGetTask(t, old, 1, -1, 0))
	clock.Advance(cfg.Queue.Timeout / 2)
	x := mustReady(t, mustGetTask(t, old, 0, -1, 0))
	z := mustReady(t, mustGetTask(t, old, 2, -1, 0))
	x2 := mustReady(t, mustGetTask(t, old, 0, x.ID, x.Records))
	z2 := mustReady(t, mustGetTask(t, old, 2, z.ID, z.Records))
	oldMeta, oldStatuses := metaOf(old), statusesOf(old)
	if n := countsOf(old); n != (core.Counts{Todo: 1, Pending: 3, Done: 2}) {
		t.Fatalf("old master counts %+v", n)
	}

	eval := &fakeEvaluator{}
	c := mustDriver(t, t.Context(), cfg, ts, store, eval, clock)
	if m := metaOf(c); !reflect.DeepEqual(m, oldMeta) || m.PassSamples != int64(x.Records+z.Records) {
		t.Fatalf("restored meta %+v, want %+v", m, oldMeta)
	}
	// The same statuses, but every deadline re-based on the new master's clock.
	for i := range oldStatuses {
		if oldStatuses[i].State == core.Pending {
			oldStatuses[i].Deadline = clock.Now().Add(cfg.Queue.Timeout)
		}
	}
	if !reflect.DeepEqual(statusesOf(c), oldStatuses) {
		t.Fatalf("restored statuses %+v, want %+v", statusesOf(c), oldStatuses)
	}
	// Trainers finish, on the new master, the tasks the old one gave them.
	last := mustReady(t, mustGetTask(t, c, 0, x2.ID, x2.Records))
	if last.ID == y.ID || last.ID == z2.ID || last.ID == x2.ID {
		t.Fatalf("restored master handed out task %d, which is held or done", last.ID)
	}
	if st := statusOf(c, x2.ID); st.State != core.Done {
		t.Fatalf("task finished on the restored master: %+v, want done", st)
	}
	// y's trainer never comes back: y times out on the new master, alone, as
	// trainers 0 and 2 are alive.
	c.TrainerUp(0)
	c.TrainerUp(2)
	clock.Advance(cfg.Queue.Timeout)
	if err := c.Tick(context.Background()); err != nil {
		t.Fatal(err)
	}
	if st := statusOf(c, y.ID); st.State != core.Todo || st.Failures != 1 {
		t.Fatalf("y after its deadline on the restored master: %+v, want todo with a failure", st)
	}
	if n := countsOf(c); n != (core.Counts{Todo: 1, Pending: 2, Done: 3}) {
		t.Fatalf("counts after y timed out %+v", n)
	}
	finished := driveAsync(t, c, map[int]*core.Task{0: &last, 2: &z2})
	flush(t, c)
	finished[0] = append(finished[0], x.ID, z.ID, x2.ID) // outside driveAsync
	for pass := range 2 {
		checkEveryTaskOnce(t, ts, finished[pass], fmt.Sprintf("pass %d", pass))
	}
	meta, _ := storedState(t, store)
	if !meta.Done || !slices.Equal(meta.SamplesApplied, []int64{42, 42}) || meta.Step != 24 {
		t.Fatalf("stored meta %+v, want done, samples [42 42] and step 24", meta)
	}
	if calls := eval.Calls(); !slices.Equal(calls, []evalCall{{0, 12}, {1, 24}}) {
		t.Fatalf("evaluator calls %+v", calls)
	}
}

func TestDriverRefusesStateOfOtherData(t *testing.T) {
	store := &MemStore{}
	mustDriver(t, t.Context(), core.FixtureAsyncConfig(1, 1, 1), manyTaskSet(3), store, &fakeEvaluator{}, newFakeClock())
	_, err := NewDriver(t.Context(), core.FixtureAsyncConfig(1, 1, 1), manyTaskSet(4), store, &fakeEvaluator{}, newFakeClock(), nil)
	if !errors.Is(err, core.ErrStaleState) {
		t.Fatalf("NewDriver over the state of 3 tasks with 4 tasks: %v, want core.ErrStaleState", err)
	}
}

// --- failing store -----------------------------------------------------------

func TestDriverFailedSaveIsFatal(t *testing.T) {
	errDisk := errors.New("disk on fire")
	ctx := context.Background()
	cases := []struct {
		name string
		cfg  core.CoreConfig
		// act makes a change that must be saved.
		act  func(c *Driver) error
		more func(c *Driver) error // a later request
	}{
		{"sync step commit", core.FixtureSyncConfig(1, 4, 1),
			func(c *Driver) error {
				if err := c.StepDone(ctx, 0, 0, 0, epoch0, 0, 4); err != nil {
					return err
				}
				return c.Flush(ctx) // the commit is deferred: wait for its save
			},
			func(c *Driver) error { _, err := c.GetStep(ctx, 0, 1, epoch0); return err }},
		{"async dispatch", core.FixtureAsyncConfig(2, 4, 1),
			func(c *Driver) error { _, err := c.GetTask(ctx, 0, -1, -1, 0, 0); return err },
			func(c *Driver) error { _, err := c.GetTask(ctx, 1, -1, -1, 0, 0); return err }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			store := newGatedStore()
			c := mustDriver(t, t.Context(), tc.cfg, core.FixtureTaskSet(), store, &fakeEvaluator{}, newFakeClock())
			// The save fails while the change is already made (and signalled):
			// whoever waits on Changed() from then on must hear of the failure.
			store.arm()
			acted := make(chan error, 1)
			go func() { acted <- tc.act(c) }()
			select {
			case <-store.entered:
			case <-time.After(5 * time.Second):
				t.Fatal("the change was never saved")
			}
			changed := c.Changed()
			store.MemStore.mu.Lock()
			store.Fail = errDisk
			store.MemStore.mu.Unlock()
			store.release()
			if err := <-acted; !errors.Is(err, errDisk) {
				t.Fatalf("request with a failing save: %v, want the save's error", err)
			}
			if err := c.Fatal(); !errors.Is(err, errDisk) {
				t.Fatalf("Fatal() = %v, want the save's error", err)
			}
			select {
			case <-changed:
			default:
				t.Fatal("a failed save did not signal Changed()")
			}
			if err := tc.more(c); !errors.Is(err, errDisk) {
				t.Fatalf("request after the failed save: %v, want the save's error", err)
			}
		})
	}
	t.Run("new core", func(t *testing.T) {
		store := &MemStore{Fail: errDisk}
		if _, err := NewDriver(t.Context(), core.FixtureAsyncConfig(1, 1, 1), core.FixtureTaskSet(), store, &fakeEvaluator{}, newFakeClock(), nil); !errors.Is(err, errDisk) {
			t.Fatalf("NewDriver with a failing store: %v, want the save's error", err)
		}
	})
}

// --- group commit ------------------------------------------------------------

func TestDriverGroupCommit(t *testing.T) {
	const trainers = 16
	store := newGatedStore()
	c := mustDriver(t, t.Context(), core.FixtureAsyncConfig(trainers, 4, 1), manyTaskSet(2*trainers), store, &fakeEvaluator{}, newFakeClock())
	before := saves(store.MemStore)
	store.arm()

	type result struct {
		w   core.Work
		err error
	}
	results := make([]result, trainers)
	var wg sync.WaitGroup
	for k := range trainers {
		wg.Go(func() {
			w, err := c.GetTask(context.Background(), k, -1, -1, 0, 0)
			results[k] = result{w, err}
		})
	}
	select {
	case <-store.entered:
	case <-time.After(5 * time.Second):
		t.Fatal("no core.Save started")
	}
	// Every caller dispatches before it queues for the commit.
	timeout := time.After(5 * time.Second)
	for {
		ch := c.Changed()
		if countsOf(c).Pending == trainers {
			break
		}
		select {
		case <-ch:
		case <-timeout:
			t.Fatalf("only %d of %d callers dispatched", countsOf(c).Pending, trainers)
		}
	}
	store.release()
	wg.Wait()

	n := saves(store.MemStore) - before
	if n >= trainers || n > 2 {
		t.Fatalf("%d concurrent GetTask made %d saves, want at most 2 (one blocked, one for the rest)", trainers, n)
	}
	_, sts := storedState(t, store.MemStore)
	seen := map[int]bool{}
	for k, r := range results {
		if r.err != nil || r.w.Status != api.WorkStatus_WORK_READY {
			t.Fatalf("caller %d: %+v, %v", k, r.w, r.err)
		}
		id := r.w.Task.ID
		if seen[id] {
			t.Fatalf("task %d handed out twice", id)
		}
		seen[id] = true
		if st := sts[id]; st.State != core.Pending || st.Trainer != k {
			t.Fatalf("stored status of task %d handed to %d: %+v", id, k, st)
		}
	}
}

// --- rollback and stop ---------------------------------------------------------

func TestDriverRollbackCancelsThePassEndUnderWay(t *testing.T) {
	ts := core.FixtureTaskSet()
	store := &MemStore{}
	eval := &fakeEvaluator{gate: make(chan struct{}), cancelled: make(chan struct{})}
	c := mustDriver(t, t.Context(), core.FixtureSyncConfig(3, 4, 2), ts, store, eval, newFakeClock())
	runSyncSteps(t, c, 0, 2)
	atStep2 := func() core.State { c.mu.Lock(); defer c.mu.Unlock(); return c.core.State() }()
	runSyncSteps(t, c, 2, 4) // the end of pass 0 is evaluated, held by the gate
	c.Pause()
	if w, err := c.GetStep(context.Background(), 0, 4, epoch0); err != nil || w.Status != api.WorkStatus_WORK_WAIT {
		t.Fatalf("GetStep while paused = %+v, %v; want WAIT", w, err)
	}
	if err := c.Rollback(context.Background(), &atStep2, 4); err != nil {
		t.Fatal(err)
	}
	select {
	case <-eval.cancelled:
	case <-time.After(5 * time.Second):
		t.Fatal("the evaluation of the abandoned pass end was not cancelled")
	}
	meta, _ := storedState(t, store)
	if meta.Step != 2 || meta.Epoch != 4 || meta.Pass != 0 {
		t.Fatalf("stored after the rollback: %+v, want step 2 of epoch 4 in pass 0", meta)
	}
	w, err := c.GetStep(context.Background(), 1, 3, epoch0)
	if err != nil || w.Status != api.WorkStatus_WORK_READY || w.Step != 2 || w.Epoch != 4 {
		t.Fatalf("a trainer of the old epoch gets %+v, %v; want step 2 of epoch 4", w, err)
	}
	if calls := eval.Calls(); !slices.Equal(calls, []evalCall{{0, 4}}) {
		t.Fatalf("evaluator calls %+v, want only the cancelled one", calls)
	}
}

func TestDriverStopsSavingWhenRunEnds(t *testing.T) {
	ctx, stop := context.WithCancel(t.Context())
	store := newGatedStore()
	c := mustDriver(t, ctx, core.FixtureAsyncConfig(2, 4, 1), core.FixtureTaskSet(), store, &fakeEvaluator{}, newFakeClock())
	store.arm()
	got := make(chan error, 2)
	go func() { _, err := c.GetTask(t.Context(), 0, -1, -1, 0, 0); got <- err }()
	<-store.entered // the first dispatch is being saved; Run is in that save
	go func() { _, err := c.GetTask(t.Context(), 1, -1, -1, 0, 0); got <- err }()
	waitChanges(t, c, func() bool { return countsOf(c).Pending == 2 })
	stop()
	store.release()
	errs := []error{<-got, <-got}
	if !slices.ContainsFunc(errs, func(err error) bool { return errors.Is(err, ErrStopped) }) {
		t.Fatalf("requests after Run ended: %v, want one ErrStopped (its change unsaved)", errs)
	}
	if err := c.Fatal(); err != nil {
		t.Fatalf("Fatal() = %v after a stop, want nil (no save failed)", err)
	}
}

// waitChanges waits (without polling) until cond holds on c.
func waitChanges(t *testing.T, c *Driver, cond func() bool) {
	t.Helper()
	timeout := time.After(5 * time.Second)
	for {
		ch := c.Changed()
		if cond() {
			return
		}
		select {
		case <-ch:
		case <-timeout:
			t.Fatal("timed out waiting for a change")
		}
	}
}

// A master dies with the reports of two steps the pservers applied (a
// trainer may take a step one ahead of the commits): its successor restores
// the older state, refuses the trainers' reports of later steps, and sends
// them back to its own step; they redo the lost reports (the pservers make
// them report without pushing) and the pass is counted exactly once — no
// "step out of order" livelock. Repeated at every step of a pass.
func TestDriverSyncSuccessorRecoversLostReports(t *testing.T) {
	const trainers, batch = 3, 4
	for lost := int64(0); lost < 2; lost++ {
		store := &MemStore{}
		first := mustDriver(t, t.Context(), core.FixtureSyncConfig(trainers, batch, 1), core.FixtureTaskSet(), store, &fakeEvaluator{}, newFakeClock())
		got := runSyncSteps(t, first, 0, lost) // committed and saved
		if err := first.Flush(t.Context()); err != nil {
			t.Fatal(err)
		}
		// The next two steps reach the pservers, but their reports die with
		// the master: nothing of them is saved.
		ahead := lost + 2

		next := mustDriver(t, t.Context(), core.FixtureSyncConfig(trainers, batch, 1), core.FixtureTaskSet(), store, &fakeEvaluator{}, newFakeClock())
		if m := metaOf(next); m.Step != lost {
			t.Fatalf("successor restored at step %d, want %d", m.Step, lost)
		}
		for k := 0; k < trainers; k++ {
			err := next.StepDone(context.Background(), k, k, ahead, epoch0, 1, 4)
			if !errors.Is(err, core.ErrBadStep) {
				t.Fatalf("report of step %d to a master at %d: %v, want core.ErrBadStep", ahead, lost, err)
			}
			// A refused trainer asks where the job is (step 0: the master's).
			if w := mustGetStep(t, next, k, 0); w.Step != lost {
				t.Fatalf("trainer %d resyncing was sent to step %d, want the master's step %d", k, w.Step, lost)
			}
			if w := mustGetStep(t, next, k, ahead+1); w.Step != lost {
				t.Fatalf("trainer %d asking for step %d was sent to step %d, want the master's step %d", k, ahead+1, w.Step, lost)
			}
		}
		got = append(got, runSyncSteps(t, next, lost, 4)...)
		checkCoversOnce(t, core.FixtureTaskSet(), got, fmt.Sprintf("pass with reports of steps %d and %d lost", lost, lost+1))
	}
}
