package master

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/gtrain/gtrain/master/core"
)

// Async mode under stalls, clock steps and lost answers (issue 8, scenario 7).
// Each test ends with the samples_applied the README documents for its case.

func tick(t *testing.T, d *Driver) {
	t.Helper()
	if err := d.Tick(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// finishAsync drives the job to its end with the held tasks (trainer ->
// task) and checks what the store holds at the end.
func finishAsync(t *testing.T, d *Driver, store *MemStore, held map[int]*core.Task, wantSamples []int64) {
	t.Helper()
	driveAsync(t, d, held)
	flush(t, d)
	meta, sts := storedState(t, store)
	if !meta.Done || !slices.Equal(meta.SamplesApplied, wantSamples) {
		t.Fatalf("stored meta at the end %+v, want done with samples_applied %v", meta, wantSamples)
	}
	for id, st := range sts {
		if st.State == core.Failed {
			t.Fatalf("task %d failed: %+v", id, st)
		}
	}
}

func TestAsyncSlowLiveTrainerKeepsItsTask(t *testing.T) {
	// samples_applied is exact: the slow trainer's task is never taken back.
	ts := core.FixtureTaskSet()
	clock := newFakeClock()
	cfg := core.FixtureAsyncConfig(2, 4, 1)
	store := &MemStore{}
	d := mustDriver(t, t.Context(), cfg, ts, store, &fakeEvaluator{}, clock)
	d.TrainerUp(0)
	slow := mustReady(t, mustGetTask(t, d, 0, -1, 0))
	other := mustReady(t, mustGetTask(t, d, 1, -1, 0)) // trainer 1: no lease seen
	for range 10 {
		clock.Advance(cfg.Queue.Timeout)
		tick(t, d)
	}
	if st := statusOf(d, slow.ID); st.State != core.Pending || st.Trainer != 0 || st.Failures != 0 {
		t.Fatalf("slow live trainer's task after 10 timeouts: %+v, want still pending for trainer 0", st)
	}
	if st := statusOf(d, other.ID); st.State != core.Todo || st.Failures != 1 {
		t.Fatalf("task of a trainer not known alive after its timeout: %+v, want todo with a failure", st)
	}
	// Its lease gone, the same trainer's task returns at once, with no failure.
	d.TrainerUp(1)
	again := mustReady(t, mustGetTask(t, d, 1, -1, 0))
	if err := d.TrainerLost(context.Background(), 1); err != nil {
		t.Fatal(err)
	}
	if st := statusOf(d, again.ID); st.State != core.Todo || st.Failures != 1 {
		t.Fatalf("task of a lost trainer: %+v, want todo, failures unchanged", st)
	}
	// Lost, trainer 1 is no longer renewed: a task it takes times out again.
	mine := mustReady(t, mustGetTask(t, d, 1, -1, 0))
	clock.Advance(cfg.Queue.Timeout)
	tick(t, d)
	if st := statusOf(d, mine.ID); st.State != core.Todo {
		t.Fatalf("task of a trainer lost earlier after its timeout: %+v, want todo", st)
	}
	finishAsync(t, d, store, map[int]*core.Task{0: &slow}, []int64{int64(ts.Records)})
}

func TestAsyncDeadlinesIgnoreWallClockSteps(t *testing.T) {
	ts := core.FixtureTaskSet()
	clock := newFakeClock()
	cfg := core.FixtureAsyncConfig(2, 4, 1)
	store := &MemStore{}
	d := mustDriver(t, t.Context(), cfg, ts, store, &fakeEvaluator{}, clock)
	a := mustReady(t, mustGetTask(t, d, 0, -1, 0))
	// A step forward of 60 s (6 timeouts) takes nothing back early ...
	clock.Jump(60 * time.Second)
	tick(t, d)
	if st := statusOf(d, a.ID); st.State != core.Pending {
		t.Fatalf("after a +60 s wall clock step: %+v, want still pending", st)
	}
	// ... and a step back of 60 s leaves nothing stuck: the timeout still
	// comes after Timeout of monotonic time.
	clock.Jump(-120 * time.Second)
	clock.Advance(cfg.Queue.Timeout - time.Millisecond)
	tick(t, d)
	if st := statusOf(d, a.ID); st.State != core.Pending {
		t.Fatalf("before the timeout, after a -60 s step: %+v, want pending", st)
	}
	clock.Advance(time.Millisecond)
	tick(t, d)
	if st := statusOf(d, a.ID); st.State != core.Todo || st.Failures != 1 {
		t.Fatalf("at the timeout, after clock steps: %+v, want todo", st)
	}
	b := mustReady(t, mustGetTask(t, d, 1, -1, 0))
	checkRestoreRebases(t, ts, cfg, store, b.ID, 60*time.Second)
	checkRestoreRebases(t, ts, cfg, store, b.ID, -60*time.Second)
}

// checkRestoreRebases restores the stored state on a master whose wall
// clock is step away from the one that stored it: task id, pending, times
// out one Timeout after the restore, neither at once nor never.
func checkRestoreRebases(t *testing.T, ts *core.TaskSet, cfg core.CoreConfig, store *MemStore, id int, step time.Duration) {
	t.Helper()
	meta, statuses, err := store.Load(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	copied := &MemStore{}
	if err := copied.Save(context.Background(), *meta, statuses, nil); err != nil {
		t.Fatal(err)
	}
	clock := newFakeClock()
	clock.Jump(step)
	d := mustDriver(t, t.Context(), cfg, ts, copied, &fakeEvaluator{}, clock)
	tick(t, d)
	if st := statusOf(d, id); st.State != core.Pending || !st.Deadline.Equal(clock.Now().Add(cfg.Queue.Timeout)) {
		t.Fatalf("restored with the wall clock %s away: %+v, want pending until now+timeout", step, st)
	}
	clock.Advance(cfg.Queue.Timeout)
	tick(t, d)
	if st := statusOf(d, id); st.State != core.Todo {
		t.Fatalf("restored with the wall clock %s away, one timeout later: %+v, want todo", step, st)
	}
}

func TestAsyncTrainerCrashMidTask(t *testing.T) {
	// The crashed trainer never reports: its task runs again elsewhere and
	// counts once. samples_applied is the set's size, while the model also
	// holds the gradients the dead trainer pushed before dying (uncounted).
	ts := core.FixtureTaskSet()
	store := &MemStore{}
	d := mustDriver(t, t.Context(), core.FixtureAsyncConfig(2, 4, 1), ts, store, &fakeEvaluator{}, newFakeClock())
	d.TrainerUp(0)
	d.TrainerUp(1)
	a := mustReady(t, mustGetTask(t, d, 0, -1, 0))
	if err := d.TrainerLost(context.Background(), 0); err != nil {
		t.Fatal(err)
	}
	b := mustReady(t, mustGetTask(t, d, 1, -1, 0))
	if b.ID != a.ID {
		t.Fatalf("after trainer 0 crashed, trainer 1 got task %d, want its task %d", b.ID, a.ID)
	}
	finishAsync(t, d, store, map[int]*core.Task{1: &b}, []int64{int64(ts.Records)})
}

func TestAsyncRepeatedReportCountsOnce(t *testing.T) {
	// A report whose answer was lost is sent again: it must not count twice,
	// and the dispatch made with it goes to the trainer again.
	ts := core.FixtureTaskSet()
	store := &MemStore{}
	d := mustDriver(t, t.Context(), core.FixtureAsyncConfig(1, 4, 1), ts, store, &fakeEvaluator{}, newFakeClock())
	a := mustReady(t, mustGetTask(t, d, 0, -1, 0))
	lost := mustReady(t, mustGetTask(t, d, 0, a.ID, a.Records)) // answer lost
	again := mustReady(t, mustGetTask(t, d, 0, a.ID, a.Records))
	if again.ID != lost.ID {
		t.Fatalf("retry got task %d, want the dispatch it never heard, %d", again.ID, lost.ID)
	}
	if m := metaOf(d); m.PassSamples != int64(a.Records) {
		t.Fatalf("samples after a repeated report %d, want %d", m.PassSamples, a.Records)
	}
	if n := countsOf(d); n.Pending != 1 {
		t.Fatalf("counts %+v, want one task pending", n)
	}
	finishAsync(t, d, store, map[int]*core.Task{0: &again}, []int64{int64(ts.Records)})
}

func TestAsyncRepeatedReportAcrossAPassEndCountsOnce(t *testing.T) {
	// The last report of pass 0 is saved with the pass end and the first
	// dispatch of pass 1, then its answer is lost: the repeat names pass 0
	// and must not count in pass 1, where the same task is todo again.
	ts := manyTaskSet(1)
	store := &MemStore{}
	cfg := core.FixtureAsyncConfig(1, 2, 2)
	cfg.LongPoll = 5 * time.Second
	d := mustDriver(t, t.Context(), cfg, ts, store, &fakeEvaluator{}, newFakeClock())
	a := mustReady(t, mustGetTask(t, d, 0, -1, 0))
	ctx := context.Background()
	lost, err := d.GetTaskPass(ctx, 0, 0, a.ID, -1, 3, 3)
	if err != nil || lost.Pass != 1 {
		t.Fatalf("report closing pass 0 = %+v, %v; want a task of pass 1", lost, err)
	}
	again, err := d.GetTaskPass(ctx, 0, 0, a.ID, -1, 3, 3)
	if err != nil || again.Pass != 1 || again.Task.ID != lost.Task.ID {
		t.Fatalf("repeated report = %+v, %v; want task %d of pass 1 again", again, err, lost.Task.ID)
	}
	if m := metaOf(d); m.PassSamples != 0 || !slices.Equal(m.SamplesApplied, []int64{3}) {
		t.Fatalf("after the repeat: %+v, want pass 1 with no samples yet", m)
	}
	if _, err := d.GetTaskPass(ctx, 0, 1, again.Task.ID, -1, 3, 3); err != nil {
		t.Fatal(err)
	}
	flush(t, d)
	if meta, _ := storedState(t, store); !meta.Done || !slices.Equal(meta.SamplesApplied, []int64{3, 3}) {
		t.Fatalf("stored meta at the end %+v, want done with samples_applied [3 3]", meta)
	}
}
