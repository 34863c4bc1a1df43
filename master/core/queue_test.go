package core

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

var queueEpoch = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

// makeQueueTasks returns n tasks with sparse, unsorted IDs so that nothing can
// rely on IDs being 0..n-1 or on input order.
func makeQueueTasks(n int) []Task {
	tasks := make([]Task, n)
	for i := range tasks {
		id := 3*(n-1-i) + 7
		tasks[i] = Task{ID: id, File: fmt.Sprintf("data-%05d", id%4), FirstChunk: id, Chunks: 1, Records: 100}
	}
	return tasks
}

func queueTestConfig() QueueConfig {
	return QueueConfig{Timeout: 10 * time.Second, MaxFailures: 2, Seed: 42}
}

func mustQueue(t testing.TB, cfg QueueConfig, tasks []Task) *Queue {
	t.Helper()
	q, err := NewQueue(cfg, tasks)
	if err != nil {
		t.Fatalf("NewQueue: %v", err)
	}
	return q
}

func mustDispatchTask(t testing.TB, q *Queue, trainer int, now time.Time) Task {
	t.Helper()
	task, err := q.Dispatch(trainer, now)
	if err != nil {
		t.Fatalf("Dispatch(trainer %d): %v", trainer, err)
	}
	return task
}

func mustTaskStatus(t testing.TB, q *Queue, id int) TaskStatus {
	t.Helper()
	s, ok := q.Status(id)
	if !ok {
		t.Fatalf("Status(%d): unknown", id)
	}
	return s
}

// runQueuePass dispatches and finishes every task of the current pass, returning
// the dispatch order.
func runQueuePass(t testing.TB, q *Queue, now time.Time) []int {
	t.Helper()
	var order []int
	for {
		task, err := q.Dispatch(1, now)
		if errors.Is(err, ErrPassDone) {
			return order
		}
		if err != nil {
			t.Fatalf("Dispatch: %v", err)
		}
		order = append(order, task.ID)
		if err := q.Finish(task.ID, 1); err != nil {
			t.Fatalf("Finish(%d): %v", task.ID, err)
		}
	}
}

func sortedTaskIDs(tasks []Task) []int {
	ids := make([]int, len(tasks))
	for i, t := range tasks {
		ids[i] = t.ID
	}
	slices.Sort(ids)
	return ids
}

func TestTaskStateString(t *testing.T) {
	for state, want := range map[TaskState]string{
		Todo: "todo", Pending: "pending", Done: "done", Failed: "failed", TaskState(9): "TaskState(9)",
	} {
		if got := state.String(); got != want {
			t.Errorf("TaskState(%d).String() = %q, want %q", int(state), got, want)
		}
	}
}

func TestQueueConfigValidate(t *testing.T) {
	tests := []struct {
		name      string
		mutate    func(*QueueConfig)
		wantField string // empty: valid
	}{
		{"default", func(*QueueConfig) {}, ""},
		{"zero failures allowed", func(c *QueueConfig) { c.MaxFailures = 0 }, ""},
		{"zero timeout", func(c *QueueConfig) { c.Timeout = 0 }, "Timeout must be > 0"},
		{"negative timeout", func(c *QueueConfig) { c.Timeout = -time.Second }, "Timeout must be > 0"},
		{"negative failures", func(c *QueueConfig) { c.MaxFailures = -1 }, "MaxFailures must be >= 0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := DefaultQueueConfig()
			tt.mutate(&cfg)
			err := cfg.Validate()
			if tt.wantField == "" {
				if err != nil {
					t.Fatalf("Validate() = %v, want nil", err)
				}
				return
			}
			if !errors.Is(err, ErrInvalidQueueConfig) || !strings.Contains(err.Error(), tt.wantField) {
				t.Fatalf("Validate() = %v, want ErrInvalidQueueConfig naming %q", err, tt.wantField)
			}
		})
	}
}

func TestDefaultQueueConfig(t *testing.T) {
	want := QueueConfig{Timeout: 30 * time.Second, MaxFailures: 3, Seed: 1}
	if got := DefaultQueueConfig(); got != want {
		t.Fatalf("DefaultQueueConfig() = %+v, want %+v", got, want)
	}
}

func TestNewQueueRejectsBadInput(t *testing.T) {
	tests := []struct {
		name    string
		cfg     QueueConfig
		tasks   []Task
		wantErr error
		naming  string
	}{
		{"empty", queueTestConfig(), nil, ErrInvalidTask, "no tasks"},
		{"duplicate", queueTestConfig(), []Task{{ID: 1}, {ID: 2}, {ID: 1}}, ErrInvalidTask, "duplicate task ID 1"},
		{"negative id", queueTestConfig(), []Task{{ID: 1}, {ID: -4}}, ErrInvalidTask, "negative ID -4"},
		{"negative chunks", queueTestConfig(), []Task{{ID: 5, Chunks: -1}}, ErrInvalidTask, "task 5"},
		{"bad config", QueueConfig{MaxFailures: 1}, []Task{{ID: 1}}, ErrInvalidQueueConfig, "Timeout"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q, err := NewQueue(tt.cfg, tt.tasks)
			if q != nil || !errors.Is(err, tt.wantErr) || !strings.Contains(err.Error(), tt.naming) {
				t.Fatalf("NewQueue = (%v, %v), want nil and %v naming %q", q, err, tt.wantErr, tt.naming)
			}
		})
	}
}

func TestNewQueueStartsWithEverythingTodo(t *testing.T) {
	tasks := makeQueueTasks(5)
	q := mustQueue(t, queueTestConfig(), tasks)
	if q.Pass() != 0 {
		t.Errorf("Pass() = %d, want 0", q.Pass())
	}
	if got, want := q.Counts(), (Counts{Todo: 5}); got != want {
		t.Errorf("Counts() = %+v, want %+v", got, want)
	}
	if q.PassDone() {
		t.Error("PassDone() = true on a new queue")
	}
	for _, task := range tasks {
		got, ok := q.Task(task.ID)
		if !ok || got != task {
			t.Errorf("Task(%d) = %+v, %v; want %+v", task.ID, got, ok, task)
		}
	}
	if _, ok := q.Task(1000); ok {
		t.Error("Task(1000) found an unknown task")
	}
	statuses := q.Statuses()
	orders := map[int]bool{}
	for i, s := range statuses {
		if s.ID != sortedTaskIDs(tasks)[i] || s.State != Todo || s.Trainer != NoTrainer || !s.Deadline.IsZero() || s.Failures != 0 {
			t.Errorf("Statuses()[%d] = %+v, want a fresh todo status of task %d", i, s, sortedTaskIDs(tasks)[i])
		}
		orders[s.Order] = true
	}
	for i := range tasks {
		if !orders[i] {
			t.Errorf("no task has Order %d; orders must be 0..n-1 on a new pass", i)
		}
	}
}

func TestDispatchOrderIsDeterministicShuffledPermutation(t *testing.T) {
	tasks := makeQueueTasks(60)
	cfg := queueTestConfig()
	q := mustQueue(t, cfg, tasks)
	pass0 := runQueuePass(t, q, queueEpoch)
	if err := q.NextPass(); err != nil {
		t.Fatalf("NextPass: %v", err)
	}
	pass1 := runQueuePass(t, q, queueEpoch)

	for name, order := range map[string][]int{"pass 0": pass0, "pass 1": pass1} {
		if got := slices.Sorted(slices.Values(order)); !slices.Equal(got, sortedTaskIDs(tasks)) {
			t.Errorf("%s dispatched %v, not a permutation of the task IDs", name, order)
		}
	}
	if slices.Equal(pass0, sortedTaskIDs(tasks)) {
		t.Error("pass 0 dispatches in ID order; want a shuffle")
	}
	if slices.Equal(pass0, pass1) {
		t.Error("pass 0 and pass 1 dispatch in the same order")
	}
	if again := runQueuePass(t, mustQueue(t, cfg, tasks), queueEpoch); !slices.Equal(again, pass0) {
		t.Errorf("same seed gave %v then %v", pass0, again)
	}
	other := cfg
	other.Seed++
	if diff := runQueuePass(t, mustQueue(t, other, tasks), queueEpoch); slices.Equal(diff, pass0) {
		t.Error("different seeds gave the same order")
	}
}

func TestDispatchWhenTodoIsEmpty(t *testing.T) {
	q := mustQueue(t, queueTestConfig(), makeQueueTasks(2))
	a := mustDispatchTask(t, q, 1, queueEpoch)
	b := mustDispatchTask(t, q, 2, queueEpoch)
	if _, err := q.Dispatch(3, queueEpoch); !errors.Is(err, ErrNoTask) {
		t.Fatalf("Dispatch with 2 pending = %v, want ErrNoTask", err)
	}
	if q.PassDone() {
		t.Fatal("PassDone() with pending tasks")
	}
	if err := q.Finish(a.ID, 1); err != nil {
		t.Fatal(err)
	}
	if err := q.Finish(b.ID, 2); err != nil {
		t.Fatal(err)
	}
	if _, err := q.Dispatch(3, queueEpoch); !errors.Is(err, ErrPassDone) {
		t.Fatalf("Dispatch after all done = %v, want ErrPassDone", err)
	}
	if !q.PassDone() {
		t.Fatal("PassDone() = false with every task done")
	}
	if _, err := q.Dispatch(-1, queueEpoch); !errors.Is(err, ErrInvalidTrainer) {
		t.Fatalf("Dispatch(-1) = %v, want ErrInvalidTrainer", err)
	}
}

func TestDispatchSetsPendingStatus(t *testing.T) {
	q := mustQueue(t, queueTestConfig(), makeQueueTasks(3))
	task := mustDispatchTask(t, q, 4, queueEpoch)
	s := mustTaskStatus(t, q, task.ID)
	if s.State != Pending || s.Trainer != 4 || !s.Deadline.Equal(queueEpoch.Add(10*time.Second)) {
		t.Fatalf("status after Dispatch = %+v, want pending for trainer 4 until queueEpoch+10s", s)
	}
	if got, want := q.Counts(), (Counts{Todo: 2, Pending: 1}); got != want {
		t.Fatalf("Counts() = %+v, want %+v", got, want)
	}
}

func TestExpireCountsFailuresUntilFailed(t *testing.T) {
	for _, maxFailures := range []int{0, 1, 3} {
		t.Run(fmt.Sprintf("MaxFailures=%d", maxFailures), func(t *testing.T) {
			cfg := queueTestConfig()
			cfg.MaxFailures = maxFailures
			q := mustQueue(t, cfg, makeQueueTasks(3))
			now := queueEpoch
			victim := mustDispatchTask(t, q, 1, now).ID
			for attempt := 1; ; attempt++ {
				now = now.Add(cfg.Timeout)
				if got := q.Expire(now); !slices.Equal(got, []int{victim}) {
					t.Fatalf("attempt %d: Expire = %v, want [%d]", attempt, got, victim)
				}
				s := mustTaskStatus(t, q, victim)
				if s.Failures != attempt {
					t.Fatalf("attempt %d: Failures = %d", attempt, s.Failures)
				}
				if attempt > maxFailures {
					if s.State != Failed || s.Trainer != NoTrainer || !s.Deadline.IsZero() {
						t.Fatalf("after %d timeouts status = %+v, want failed", attempt, s)
					}
					if got, want := q.Counts(), (Counts{Todo: 2, Failed: 1}); got != want {
						t.Fatalf("Counts() = %+v, want %+v", got, want)
					}
					return
				}
				if s.State != Todo {
					t.Fatalf("attempt %d: state %v, want todo", attempt, s.State)
				}
				// Re-queued at the front: the next dispatch retries it.
				if got := mustDispatchTask(t, q, attempt+1, now).ID; got != victim {
					t.Fatalf("attempt %d: dispatched %d after expiry, want %d from the front", attempt, got, victim)
				}
			}
		})
	}
}

func TestExpireDeadlineBoundaryAndRenew(t *testing.T) {
	q := mustQueue(t, queueTestConfig(), makeQueueTasks(3))
	id := mustDispatchTask(t, q, 1, queueEpoch).ID
	deadline := queueEpoch.Add(10 * time.Second)
	if got := q.Expire(deadline.Add(-time.Nanosecond)); got != nil {
		t.Fatalf("Expire before deadline = %v, want nothing", got)
	}
	if err := q.Renew(id, 1, queueEpoch.Add(5*time.Second)); err != nil {
		t.Fatalf("Renew: %v", err)
	}
	if got := q.Expire(deadline); got != nil {
		t.Fatalf("Expire at the old deadline after Renew = %v, want nothing", got)
	}
	if got := mustTaskStatus(t, q, id).Deadline; !got.Equal(queueEpoch.Add(15 * time.Second)) {
		t.Fatalf("deadline after Renew = %v, want queueEpoch+15s", got)
	}
	if got := q.Expire(queueEpoch.Add(15 * time.Second)); !slices.Equal(got, []int{id}) {
		t.Fatalf("Expire exactly at the renewed deadline = %v, want [%d]", got, id)
	}
}

func TestExpireReturnsAscendingAndRequeuesInThatOrder(t *testing.T) {
	q := mustQueue(t, queueTestConfig(), makeQueueTasks(6))
	var held []int
	for i := range 4 {
		held = append(held, mustDispatchTask(t, q, i, queueEpoch.Add(time.Duration(i)*time.Second)).ID)
	}
	// Deadlines are queueEpoch+10s..+13s; expire the first three.
	got := q.Expire(queueEpoch.Add(12 * time.Second))
	want := slices.Sorted(slices.Values(held[:3]))
	if !slices.Equal(got, want) {
		t.Fatalf("Expire = %v, want %v", got, want)
	}
	for _, id := range want {
		if d := mustDispatchTask(t, q, 9, queueEpoch.Add(20*time.Second)).ID; d != id {
			t.Fatalf("dispatched %d, want expired tasks first, ascending: %v", d, want)
		}
	}
	if s := mustTaskStatus(t, q, held[3]); s.State != Pending || s.Trainer != 3 {
		t.Fatalf("unexpired task %d status = %+v", held[3], s)
	}
}

func TestRenewRejectsNonOwner(t *testing.T) {
	q := mustQueue(t, queueTestConfig(), makeQueueTasks(3))
	id := mustDispatchTask(t, q, 1, queueEpoch).ID
	todoID := q.todo.Front().Value.(*queueEntry).task.ID
	tests := []struct {
		name    string
		id      int
		trainer int
		wantErr error
	}{
		{"other trainer", id, 2, ErrNotOwner},
		{"todo task", todoID, 1, ErrNotOwner},
		{"unknown task", 99999, 1, ErrUnknownTask},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := q.Statuses()
			if err := q.Renew(tt.id, tt.trainer, queueEpoch.Add(time.Second)); !errors.Is(err, tt.wantErr) {
				t.Fatalf("Renew = %v, want %v", err, tt.wantErr)
			}
			if after := q.Statuses(); !reflect.DeepEqual(before, after) {
				t.Fatal("rejected Renew changed state")
			}
		})
	}
}

func TestStaleFinishIsRejected(t *testing.T) {
	q := mustQueue(t, queueTestConfig(), makeQueueTasks(3))
	id := mustDispatchTask(t, q, 1, queueEpoch).ID
	q.Expire(queueEpoch.Add(time.Minute))
	if got := mustDispatchTask(t, q, 2, queueEpoch.Add(time.Minute)).ID; got != id {
		t.Fatalf("re-dispatched %d, want %d", got, id)
	}
	q.TakeChanges()
	before := q.Statuses()
	for _, op := range []struct {
		name string
		call func() error
	}{
		{"Finish", func() error { return q.Finish(id, 1) }},
		{"Fail", func() error { return q.Fail(id, 1) }},
	} {
		if err := op.call(); !errors.Is(err, ErrNotOwner) {
			t.Fatalf("stale %s by the first trainer = %v, want ErrNotOwner", op.name, err)
		}
	}
	if after := q.Statuses(); !reflect.DeepEqual(before, after) {
		t.Fatalf("stale calls changed state:\n%+v\n%+v", before, after)
	}
	if _, changed := q.TakeChanges(); changed != nil {
		t.Fatalf("stale calls recorded changes %+v", changed)
	}
	if err := q.Finish(id, 2); err != nil {
		t.Fatalf("Finish by current owner: %v", err)
	}
	if err := q.Finish(id, 2); !errors.Is(err, ErrNotOwner) {
		t.Fatalf("second Finish = %v, want ErrNotOwner", err)
	}
	if s := mustTaskStatus(t, q, id); s.State != Done || s.Trainer != NoTrainer || !s.Deadline.IsZero() || s.Failures != 1 {
		t.Fatalf("status after Finish = %+v, want done with 1 failure", s)
	}
	if err := q.Finish(424242, 2); !errors.Is(err, ErrUnknownTask) {
		t.Fatalf("Finish of unknown task = %v, want ErrUnknownTask", err)
	}
}

func TestFailRequeuesAtFrontThenFails(t *testing.T) {
	q := mustQueue(t, queueTestConfig(), makeQueueTasks(4)) // MaxFailures 2
	id := mustDispatchTask(t, q, 1, queueEpoch).ID
	for attempt := 1; attempt <= 3; attempt++ {
		if err := q.Fail(id, attempt); err != nil {
			t.Fatalf("Fail attempt %d: %v", attempt, err)
		}
		s := mustTaskStatus(t, q, id)
		if s.Failures != attempt {
			t.Fatalf("Failures = %d after %d failures", s.Failures, attempt)
		}
		if attempt == 3 {
			if s.State != Failed {
				t.Fatalf("state after 3 failures with MaxFailures 2 = %v, want failed", s.State)
			}
			break
		}
		if got := mustDispatchTask(t, q, attempt+1, queueEpoch).ID; got != id {
			t.Fatalf("after Fail dispatched %d, want %d from the front", got, id)
		}
	}
	if err := q.Fail(id, 3); !errors.Is(err, ErrNotOwner) {
		t.Fatalf("Fail of a failed task = %v, want ErrNotOwner", err)
	}
	if got, want := q.Counts(), (Counts{Todo: 3, Failed: 1}); got != want {
		t.Fatalf("Counts() = %+v, want %+v", got, want)
	}
}

func TestReleaseTrainer(t *testing.T) {
	q := mustQueue(t, queueTestConfig(), makeQueueTasks(6))
	var dead []int
	for range 3 {
		dead = append(dead, mustDispatchTask(t, q, 7, queueEpoch).ID)
	}
	alive := mustDispatchTask(t, q, 8, queueEpoch).ID
	if err := q.Fail(dead[0], 7); err != nil {
		t.Fatal(err)
	}
	if got := mustDispatchTask(t, q, 7, queueEpoch).ID; got != dead[0] {
		t.Fatalf("re-dispatched %d, want %d", got, dead[0])
	}

	got := q.ReleaseTrainer(7)
	want := slices.Sorted(slices.Values(dead))
	if !slices.Equal(got, want) {
		t.Fatalf("ReleaseTrainer(7) = %v, want %v", got, want)
	}
	for _, id := range dead {
		s := mustTaskStatus(t, q, id)
		wantFailures := 0
		if id == dead[0] {
			wantFailures = 1 // from the Fail above, not from the release
		}
		if s.State != Todo || s.Failures != wantFailures || s.Trainer != NoTrainer {
			t.Errorf("released task %d status %+v, want todo with %d failures", id, s, wantFailures)
		}
	}
	if s := mustTaskStatus(t, q, alive); s.State != Pending || s.Trainer != 8 {
		t.Errorf("other trainer's task %d status %+v, want still pending", alive, s)
	}
	for _, id := range want {
		if d := mustDispatchTask(t, q, 9, queueEpoch).ID; d != id {
			t.Fatalf("dispatched %d, want released tasks first, ascending %v", d, want)
		}
	}
	if got := q.ReleaseTrainer(7); got != nil {
		t.Fatalf("second ReleaseTrainer(7) = %v, want nothing", got)
	}
	if got := q.Expire(queueEpoch.Add(time.Hour)); len(got) != 4 {
		t.Fatalf("Expire after release = %v, want the 4 pending tasks", got)
	}
}

// runPassWithFailures runs a pass in which the first task dispatched fails
// for good and the second fails once; it checks that the pass cannot end
// before it is over.
func runPassWithFailures(t *testing.T, q *Queue) (failedID, retriedID int) {
	t.Helper()
	for i := 0; ; i++ {
		task, err := q.Dispatch(1, queueEpoch)
		if errors.Is(err, ErrPassDone) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case i == 0:
			failedID = task.ID
			for n := 0; n < 3; n++ { // MaxFailures 2: the third failure is final
				if err := q.Fail(task.ID, 1); err != nil {
					t.Fatal(err)
				}
				if n < 2 {
					mustDispatchTask(t, q, 1, queueEpoch)
				}
			}
		case i == 1:
			retriedID = task.ID
			if err := q.Fail(task.ID, 1); err != nil {
				t.Fatal(err)
			}
		default:
			if i == 2 && q.Counts().Pending != 1 {
				t.Fatal("expected exactly the current task pending")
			}
			if err := q.Finish(task.ID, 1); err != nil {
				t.Fatal(err)
			}
		}
		if i == 2 {
			if err := q.NextPass(); !errors.Is(err, ErrPassNotDone) {
				t.Fatalf("NextPass mid-pass = %v, want ErrPassNotDone", err)
			}
		}
	}
	return failedID, retriedID
}

func TestNextPass(t *testing.T) {
	q := mustQueue(t, queueTestConfig(), makeQueueTasks(5))
	if err := q.NextPass(); !errors.Is(err, ErrPassNotDone) {
		t.Fatalf("NextPass on a fresh queue = %v, want ErrPassNotDone", err)
	}
	failedID, retriedID := runPassWithFailures(t, q)
	if got, want := q.Counts(), (Counts{Done: 4, Failed: 1}); got != want {
		t.Fatalf("Counts() at end of pass = %+v, want %+v", got, want)
	}
	q.TakeChanges()
	if err := q.NextPass(); err != nil {
		t.Fatalf("NextPass: %v", err)
	}
	if q.Pass() != 1 {
		t.Fatalf("Pass() = %d, want 1", q.Pass())
	}
	if got, want := q.Counts(), (Counts{Todo: 4, Failed: 1}); got != want {
		t.Fatalf("Counts() in pass 1 = %+v, want %+v", got, want)
	}
	if s := mustTaskStatus(t, q, failedID); s.State != Failed || s.Failures != 3 {
		t.Fatalf("failed task in pass 1: %+v, want still failed", s)
	}
	if s := mustTaskStatus(t, q, retriedID); s.State != Todo || s.Failures != 0 {
		t.Fatalf("task retried in pass 0: %+v, want todo with failures reset", s)
	}
	pass, changed := q.TakeChanges()
	if pass != 1 || len(changed) != 5 {
		t.Fatalf("TakeChanges after NextPass = pass %d, %d changes; want pass 1 and all 5", pass, len(changed))
	}
	orders := map[int]bool{}
	for _, s := range changed {
		if s.State == Todo {
			orders[s.Order] = true
		}
	}
	for i := range 4 {
		if !orders[i] {
			t.Fatalf("todo orders in the new pass are not 0..3: %+v", changed)
		}
	}
	if got := runQueuePass(t, q, queueEpoch); len(got) != 4 || slices.Contains(got, failedID) {
		t.Fatalf("pass 1 dispatched %v, want the 4 non-failed tasks", got)
	}
}

func TestTakeChanges(t *testing.T) {
	q := mustQueue(t, queueTestConfig(), makeQueueTasks(4))
	pass, changed := q.TakeChanges()
	if pass != 0 || !reflect.DeepEqual(changed, q.Statuses()) {
		t.Fatalf("first TakeChanges = %d, %+v; want pass 0 and every status", pass, changed)
	}
	if _, changed := q.TakeChanges(); changed != nil {
		t.Fatalf("second TakeChanges = %+v, want nothing", changed)
	}
	a := mustDispatchTask(t, q, 1, queueEpoch)
	b := mustDispatchTask(t, q, 1, queueEpoch)
	if err := q.Renew(a.ID, 1, queueEpoch.Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	if err := q.Finish(b.ID, 1); err != nil {
		t.Fatal(err)
	}
	_, changed = q.TakeChanges()
	want := []TaskStatus{mustTaskStatus(t, q, a.ID), mustTaskStatus(t, q, b.ID)}
	slices.SortFunc(want, func(x, y TaskStatus) int { return x.ID - y.ID })
	if !reflect.DeepEqual(changed, want) {
		t.Fatalf("TakeChanges = %+v, want each changed task once, by ID: %+v", changed, want)
	}
}

// changeStore accumulates TakeChanges the way the persister does.
type changeStore struct {
	pass     int
	statuses map[int]TaskStatus
}

func (s *changeStore) take(q *Queue) {
	pass, changed := q.TakeChanges()
	s.pass = pass
	if s.statuses == nil {
		s.statuses = map[int]TaskStatus{}
	}
	for _, st := range changed {
		s.statuses[st.ID] = st
	}
}

func (s *changeStore) restore(t testing.TB, cfg QueueConfig, tasks []Task) *Queue {
	t.Helper()
	statuses := make([]TaskStatus, 0, len(s.statuses))
	for _, st := range s.statuses {
		statuses = append(statuses, st)
	}
	q, err := RestoreQueue(cfg, tasks, s.pass, statuses)
	if err != nil {
		t.Fatalf("RestoreQueue: %v", err)
	}
	return q
}

func TestRestoreFromChangesEqualsOriginal(t *testing.T) {
	cfg := queueTestConfig()
	tasks := makeQueueTasks(20)
	q := mustQueue(t, cfg, tasks)
	var s changeStore
	s.take(q)

	now := queueEpoch
	step := func(f func()) { f(); s.take(q) }
	// Pass 0: everything done except one permanently failed task.
	step(func() { runQueuePass(t, q, now) })
	step(func() {
		if err := q.NextPass(); err != nil {
			t.Fatal(err)
		}
	})
	// Pass 1: a mix of every state and of re-queued tasks.
	var held []Task
	for i := range 9 {
		step(func() { held = append(held, mustDispatchTask(t, q, i%3, now.Add(time.Duration(i)*time.Second))) })
	}
	step(func() { _ = q.Finish(held[0].ID, 0) })
	step(func() { _ = q.Fail(held[1].ID, 1) })
	step(func() { _ = q.Renew(held[2].ID, 2, now.Add(30*time.Second)) })
	step(func() { q.Expire(now.Add(13 * time.Second)) })
	step(func() { q.ReleaseTrainer(2) })
	step(func() { mustDispatchTask(t, q, 5, now.Add(14*time.Second)) })

	r := s.restore(t, cfg, tasks)
	if r.Pass() != q.Pass() || r.Counts() != q.Counts() {
		t.Fatalf("restored pass %d counts %+v, original pass %d counts %+v", r.Pass(), r.Counts(), q.Pass(), q.Counts())
	}
	if !reflect.DeepEqual(r.Statuses(), q.Statuses()) {
		t.Fatalf("restored statuses differ:\n%+v\n%+v", r.Statuses(), q.Statuses())
	}
	if _, changed := r.TakeChanges(); changed != nil {
		t.Fatalf("restored queue reports changes %+v", changed)
	}
	later := now.Add(time.Minute)
	if a, b := q.Expire(later), r.Expire(later); !slices.Equal(a, b) || len(a) == 0 {
		t.Fatalf("Expire after restore: original %v, restored %v", a, b)
	}
	if a, b := runQueuePass(t, q, later), runQueuePass(t, r, later); !slices.Equal(a, b) || len(a) == 0 {
		t.Fatalf("dispatch sequence after restore: original %v, restored %v", a, b)
	}
}

func TestRestoreRejectsInconsistentState(t *testing.T) {
	cfg := queueTestConfig()
	tasks := []Task{{ID: 1}, {ID: 2}, {ID: 3}}
	deadline := queueEpoch.Add(time.Second)
	valid := func() []TaskStatus {
		return []TaskStatus{
			{ID: 1, State: Todo, Trainer: NoTrainer, Order: 4},
			{ID: 2, State: Pending, Trainer: 3, Deadline: deadline, Order: 1},
			{ID: 3, State: Done, Trainer: NoTrainer, Order: 0},
		}
	}
	tests := []struct {
		name    string
		pass    int
		edit    func([]TaskStatus) []TaskStatus
		wantErr error
		naming  string
	}{
		{"unknown task", 0, func(s []TaskStatus) []TaskStatus { return append(s, TaskStatus{ID: 9, Trainer: NoTrainer}) }, ErrUnknownTask, "task 9"},
		{"missing status", 0, func(s []TaskStatus) []TaskStatus { return s[:2] }, ErrInconsistentState, "task 3 has no status"},
		{"duplicate status", 0, func(s []TaskStatus) []TaskStatus { return append(s, s[0]) }, ErrInconsistentState, "task 1 has more than one"},
		{"pending without trainer", 0, func(s []TaskStatus) []TaskStatus { s[1].Trainer = NoTrainer; return s }, ErrInconsistentState, "pending task 2"},
		{"pending without deadline", 0, func(s []TaskStatus) []TaskStatus { s[1].Deadline = time.Time{}; return s }, ErrInconsistentState, "pending task 2"},
		{"todo with trainer", 0, func(s []TaskStatus) []TaskStatus { s[0].Trainer = 2; return s }, ErrInconsistentState, "task 1"},
		{"done with deadline", 0, func(s []TaskStatus) []TaskStatus { s[2].Deadline = deadline; return s }, ErrInconsistentState, "task 3"},
		{"bad state", 0, func(s []TaskStatus) []TaskStatus { s[2].State = TaskState(7); return s }, ErrInconsistentState, "task 3"},
		{"negative failures", 0, func(s []TaskStatus) []TaskStatus { s[0].Failures = -1; return s }, ErrInconsistentState, "task 1"},
		{"shared todo order", 0, func(s []TaskStatus) []TaskStatus {
			s[2] = TaskStatus{ID: 3, State: Todo, Trainer: NoTrainer, Order: 4}
			return s
		}, ErrInconsistentState, "tasks 1 and 3 share Order 4"},
		{"negative pass", -1, func(s []TaskStatus) []TaskStatus { return s }, ErrInconsistentState, "pass -1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q, err := RestoreQueue(cfg, tasks, tt.pass, tt.edit(valid()))
			if q != nil || !errors.Is(err, tt.wantErr) || !strings.Contains(err.Error(), tt.naming) {
				t.Fatalf("RestoreQueue = (%v, %v), want %v naming %q", q, err, tt.wantErr, tt.naming)
			}
		})
	}
	q, err := RestoreQueue(cfg, tasks, 2, valid())
	if err != nil {
		t.Fatalf("RestoreQueue(valid) = %v", err)
	}
	if got, want := q.Counts(), (Counts{Todo: 1, Pending: 1, Done: 1}); got != want || q.Pass() != 2 {
		t.Fatalf("restored pass %d counts %+v, want pass 2 and %+v", q.Pass(), got, want)
	}
	if got := q.Expire(deadline); !slices.Equal(got, []int{2}) {
		t.Fatalf("Expire of the restored pending task = %v, want [2]", got)
	}
}

// checkQueueInvariants verifies the queue's internal structures agree with each
// other and with the statuses it reports.
func checkQueueInvariants(t testing.TB, q *Queue) {
	t.Helper()
	var counts Counts
	for _, s := range q.Statuses() {
		switch s.State {
		case Todo:
			counts.Todo++
		case Pending:
			counts.Pending++
		case Done:
			counts.Done++
		case Failed:
			counts.Failed++
		default:
			t.Fatalf("task %d in invalid state %v", s.ID, s.State)
		}
		if err := validateStatus(s); err != nil {
			t.Fatalf("status invariant: %v", err)
		}
		if s.State == Failed && s.Failures != q.cfg.MaxFailures+1 {
			t.Fatalf("failed task %d has %d failures, want %d", s.ID, s.Failures, q.cfg.MaxFailures+1)
		}
		if s.State != Failed && s.Failures > q.cfg.MaxFailures {
			t.Fatalf("%v task %d has %d failures > MaxFailures", s.State, s.ID, s.Failures)
		}
	}
	if got := q.Counts(); got != counts || got.Total() != len(q.entries) {
		t.Fatalf("Counts() = %+v, statuses say %+v over %d tasks", got, counts, len(q.entries))
	}
	prevOrder, inTodo := 0, 0
	for el := q.todo.Front(); el != nil; el = el.Next() {
		e := el.Value.(*queueEntry)
		if e.state != Todo || e.todoElem != el {
			t.Fatalf("todo list holds task %d in state %v", e.task.ID, e.state)
		}
		if inTodo > 0 && e.order <= prevOrder {
			t.Fatalf("todo Order not increasing: task %d has %d after %d", e.task.ID, e.order, prevOrder)
		}
		prevOrder = e.order
		inTodo++
	}
	pendingByTrainer := 0
	for trainer, held := range q.byTrainer {
		if len(held) == 0 {
			t.Fatalf("empty pending set kept for trainer %d", trainer)
		}
		for id, e := range held {
			if e.state != Pending || e.trainer != trainer || e.task.ID != id {
				t.Fatalf("trainer %d index holds task %d: %+v", trainer, id, e.status())
			}
			pendingByTrainer++
		}
	}
	for i, e := range q.deadlines {
		if e.heapIndex != i || e.state != Pending {
			t.Fatalf("heap slot %d holds task %d with index %d state %v", i, e.task.ID, e.heapIndex, e.state)
		}
		if i > 0 && q.deadlines.Less(i, (i-1)/2) {
			t.Fatalf("heap order broken at slot %d", i)
		}
	}
	for i := range q.entries {
		e := &q.entries[i]
		if (e.state == Todo) != (e.todoElem != nil) || (e.state == Pending) != (e.heapIndex >= 0) {
			t.Fatalf("task %d in state %v: todoElem %v heapIndex %d", e.task.ID, e.state, e.todoElem != nil, e.heapIndex)
		}
	}
	if inTodo != counts.Todo || len(q.deadlines) != counts.Pending || pendingByTrainer != counts.Pending {
		t.Fatalf("structures hold %d todo, %d heap, %d by trainer; statuses say %+v",
			inTodo, len(q.deadlines), pendingByTrainer, counts)
	}
}

// queueOp is a kind of random operation on a queue.
type queueOp int

const (
	opDispatch queueOp = iota
	opFinish
	opFail
	opRenew
	opExpire
	opRelease
	opNextPass
)

var (
	queueOpNames   = []string{"dispatch", "finish", "fail", "renew", "expire", "release", "next pass"}
	queueOpWeights = []int{4, 4, 1, 2, 1, 1, 1}
)

// queueCall is one random operation: what, on which task, by which trainer, when.
type queueCall struct {
	kind        queueOp
	id, trainer int
	now         time.Time
}

// randomQueueCall mostly acts on a pending task as its owner; sometimes on
// any task, a wrong trainer or an unknown ID, which must be refused.
func randomQueueCall(rng *rand.Rand, q *Queue, ids []int, trainers int, now time.Time) queueCall {
	kind := opDispatch
	for n, k := rng.IntN(20), 0; k < len(queueOpWeights); k++ {
		if n < queueOpWeights[k] {
			kind = queueOp(k)
			break
		}
		n -= queueOpWeights[k]
	}
	c := queueCall{kind: kind, id: ids[rng.IntN(len(ids))], trainer: rng.IntN(trainers), now: now}
	if len(q.deadlines) > 0 && rng.IntN(4) != 0 {
		e := q.deadlines[rng.IntN(len(q.deadlines))]
		c.id, c.trainer = e.task.ID, e.trainer
	}
	if rng.IntN(30) == 0 {
		c.id = -5
	}
	return c
}

// apply runs the call on q: what it answered, and whether it took effect.
func (c queueCall) apply(t *testing.T, q *Queue) (any, bool) {
	switch c.kind {
	case opDispatch:
		task, err := q.Dispatch(c.trainer, c.now)
		return fmt.Sprint(task, queueErrKind(err)), err == nil
	case opFinish:
		err := q.Finish(c.id, c.trainer)
		return queueErrKind(err), err == nil
	case opFail:
		err := q.Fail(c.id, c.trainer)
		return queueErrKind(err), err == nil
	case opRenew:
		err := q.Renew(c.id, c.trainer, c.now)
		return queueErrKind(err), err == nil
	case opExpire:
		got := q.Expire(c.now)
		return got, len(got) > 0
	case opRelease:
		got := q.ReleaseTrainer(c.trainer)
		return got, len(got) > 0
	default:
		wasDone := q.PassDone()
		err := q.NextPass()
		if wasDone != (err == nil) {
			t.Fatalf("PassDone() = %v but NextPass() = %v", wasDone, err)
		}
		return queueErrKind(err), err == nil
	}
}

// TestRandomOperationsKeepInvariants drives a queue and a shadow rebuilt
// from persisted changes with the same random operations: the invariants
// must hold throughout and both must answer identically.
func TestRandomOperationsKeepInvariants(t *testing.T) {
	reached := map[string]int{}
	for seed := range uint64(8) {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) { runRandomQueueOps(t, seed, reached) })
	}
	t.Logf("operations that took effect: %v", reached)
	for _, what := range append(queueOpNames, "failed task", "restore") {
		if reached[what] < 10 {
			t.Errorf("random operations reached %q only %d times: %v", what, reached[what], reached)
		}
	}
}

// runRandomQueueOps runs 1500 random operations of seed, counting in reached
// what took effect.
func runRandomQueueOps(t *testing.T, seed uint64, reached map[string]int) {
	const trainers = 5
	rng := rand.New(rand.NewPCG(seed, 99))
	cfg := QueueConfig{Timeout: 10 * time.Second, MaxFailures: int(seed % 3), Seed: seed}
	tasks := makeQueueTasks(1 + rng.IntN(30))
	ids := sortedTaskIDs(tasks)
	q := mustQueue(t, cfg, tasks)
	var s changeStore
	s.take(q)
	shadow := s.restore(t, cfg, tasks)
	now := queueEpoch
	for op := range 1500 {
		now = now.Add(time.Duration(rng.IntN(1500)) * time.Millisecond)
		call := randomQueueCall(rng, q, ids, trainers, now)
		desc := fmt.Sprintf("op %d: %s task %d trainer %d", op, queueOpNames[call.kind], call.id, call.trainer)
		before := q.Statuses()
		got, _ := call.apply(t, shadow)
		want, effective := call.apply(t, q)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: original %v, restored shadow %v", desc, want, got)
		}
		after := q.Statuses()
		if effective {
			reached[queueOpNames[call.kind]]++
		} else if call.kind != opDispatch && !reflect.DeepEqual(before, after) {
			t.Fatalf("%s: refused or empty operation changed state", desc)
		}
		checkQueueInvariants(t, q)
		checkQueueInvariants(t, shadow)
		if !reflect.DeepEqual(after, shadow.Statuses()) || q.Pass() != shadow.Pass() {
			t.Fatalf("%s: shadow diverged", desc)
		}
		if q.Counts().Failed > 0 {
			reached["failed task"]++
		}
		s.take(q)
		shadow.TakeChanges()
		if rng.IntN(50) == 0 {
			shadow = s.restore(t, cfg, tasks)
			reached["restore"]++
		}
	}
}

func queueErrKind(err error) string {
	for _, sentinel := range []error{ErrNoTask, ErrPassDone, ErrNotOwner, ErrUnknownTask, ErrPassNotDone, ErrInvalidTrainer} {
		if errors.Is(err, sentinel) {
			return sentinel.Error()
		}
	}
	if err != nil {
		return "unexpected: " + err.Error()
	}
	return "ok"
}

func BenchmarkDispatchFinish(b *testing.B) {
	q := mustQueue(b, DefaultQueueConfig(), makeQueueTasks(100_000))
	now := queueEpoch
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		task, err := q.Dispatch(i%64, now)
		if errors.Is(err, ErrPassDone) {
			if err := q.NextPass(); err != nil {
				b.Fatal(err)
			}
			task, err = q.Dispatch(i%64, now)
		}
		if err != nil {
			b.Fatal(err)
		}
		if err := q.Finish(task.ID, i%64); err != nil {
			b.Fatal(err)
		}
		if i%1024 == 0 {
			q.TakeChanges()
		}
	}
}
