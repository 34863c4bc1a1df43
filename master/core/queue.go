package core

import (
	"cmp"
	"container/heap"
	"container/list"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"time"
)

// Sentinel errors of the task queue; returned wrapped, check with errors.Is.
var (
	// ErrNoTask: nothing to hand out right now, but pending tasks may come
	// back; the caller should wait and retry.
	ErrNoTask = errors.New("no task to dispatch while tasks are pending")
	// ErrPassDone: every task of the pass is done or failed.
	ErrPassDone = errors.New("pass done")
	// ErrNotOwner: the caller does not hold the task (stale or foreign).
	ErrNotOwner = errors.New("task not pending for this trainer")
	// ErrUnknownTask: the task ID is not in the queue.
	ErrUnknownTask = errors.New("unknown task")
	// ErrPassNotDone: NextPass called while tasks are still todo or pending.
	ErrPassNotDone = errors.New("pass not done")
	// ErrInvalidQueueConfig: a QueueConfig field is out of range.
	ErrInvalidQueueConfig = errors.New("invalid queue config")
	// ErrInvalidTask: the task list given to NewQueue/RestoreQueue is unusable.
	ErrInvalidTask = errors.New("invalid task list")
	// ErrInvalidTrainer: trainer IDs must be >= 0 (-1 means "none").
	ErrInvalidTrainer = errors.New("invalid trainer")
	// ErrInconsistentState: persisted statuses do not describe a valid queue.
	ErrInconsistentState = errors.New("inconsistent queue state")
)

// NoTrainer is TaskStatus.Trainer for a task no trainer holds.
const NoTrainer = -1

// QueueConfig tunes the queue.
type QueueConfig struct {
	// Timeout is how long a dispatched task stays with a trainer without a
	// renewal (Renew, RenewTrainer) before Expire takes it back. The master
	// renews the tasks of every trainer whose etcd lease is alive, so only a
	// trainer not known to be alive loses its tasks to the timeout.
	Timeout time.Duration
	// MaxFailures is how many failures (Fail or timeout) a task may have in
	// one pass and still be retried; one more marks it failed.
	MaxFailures int
	// Seed, with the pass number, seeds each pass's dispatch order.
	Seed uint64
	// NoShuffle dispatches every pass in task ID order, the stored order
	// (data.shuffle: false); the sync plan then keeps each task's records
	// in their stored order too.
	NoShuffle bool
}

// DefaultQueueConfig returns the defaults; heartbeat settings elsewhere may
// shorten Timeout.
func DefaultQueueConfig() QueueConfig {
	return QueueConfig{Timeout: 30 * time.Second, MaxFailures: 3, Seed: 1}
}

// Validate names the first field that is out of range.
func (c QueueConfig) Validate() error {
	if c.Timeout <= 0 {
		return fmt.Errorf("%w: Timeout must be > 0, got %v", ErrInvalidQueueConfig, c.Timeout)
	}
	if c.MaxFailures < 0 {
		return fmt.Errorf("%w: MaxFailures must be >= 0, got %d", ErrInvalidQueueConfig, c.MaxFailures)
	}
	return nil
}

// Counts is the number of tasks in each state.
type Counts struct {
	Todo, Pending, Done, Failed int
}

// Total is the number of tasks in the queue.
func (c Counts) Total() int { return c.Todo + c.Pending + c.Done + c.Failed }

// Queue is the master's task queue: a pure state machine over the tasks of
// one job. It is not safe for concurrent use; the master serialises access.
//
// Every operation is O(1) or O(log n) except NextPass, Statuses and the
// constructors (O(n)) and TakeChanges (O(k log k) for k changed tasks).
type Queue struct {
	cfg  QueueConfig
	pass int
	// entries holds every task, by ascending ID, in one allocation that is
	// never resized (the lists point into it); dense: entries[i] has ID i.
	entries []queueEntry
	dense   bool

	todo      *list.List // of *queueEntry, front is dispatched next
	deadlines deadlineHeap
	byTrainer map[int]map[int]*queueEntry // pending tasks per trainer
	done      int
	failed    int

	// changed lists the IDs whose queueEntry.changed is set, in the order
	// they first changed; TakeChanges sorts and clears it.
	changed []int
}

type queueEntry struct {
	task      Task
	state     TaskState
	failures  int
	trainer   int
	deadline  time.Time
	order     int
	todoElem  *list.Element // non-nil iff state == Todo
	heapIndex int           // index in Queue.deadlines iff state == Pending, else -1
	changed   bool
}

func (e *queueEntry) status() TaskStatus {
	return TaskStatus{
		ID:       e.task.ID,
		State:    e.state,
		Failures: e.failures,
		Trainer:  e.trainer,
		Deadline: e.deadline,
		Order:    e.order,
	}
}

// NewQueue builds pass 0 with every task todo, in the pass's shuffled order.
// Every task counts as changed, so the first TakeChanges yields the full
// state to persist.
func NewQueue(cfg QueueConfig, tasks []Task) (*Queue, error) {
	q, err := newEmptyQueue(cfg, tasks, Done)
	if err != nil {
		return nil, err
	}
	q.done = len(q.entries) // entries start done, so filling pass 0 is NextPass's rule
	q.fillTodoForPass()
	return q, nil
}

// RestoreQueue rebuilds a queue from persisted state: the task list, the
// pass and one status per task (for example the union of every TakeChanges,
// later statuses replacing earlier ones). Todo tasks are ordered by Order;
// pending tasks keep their trainer and deadline, so Expire takes them back
// if their trainer does not renew; a master restoring a stored state calls
// RebaseDeadlines next. Nothing counts as changed afterwards.
func RestoreQueue(cfg QueueConfig, tasks []Task, pass int, statuses []TaskStatus) (*Queue, error) {
	if pass < 0 {
		return nil, fmt.Errorf("%w: negative pass %d", ErrInconsistentState, pass)
	}
	q, err := newEmptyQueue(cfg, tasks, unrestored)
	if err != nil {
		return nil, err
	}
	q.pass = pass
	for _, s := range statuses {
		e, ok := q.entry(s.ID)
		if !ok {
			return nil, fmt.Errorf("%w: status for task %d, which is not in the task list", ErrUnknownTask, s.ID)
		}
		if e.state != unrestored {
			return nil, fmt.Errorf("%w: task %d has more than one status", ErrInconsistentState, s.ID)
		}
		if err := validateStatus(s); err != nil {
			return nil, err
		}
		e.state, e.failures, e.trainer, e.deadline, e.order = s.State, s.Failures, s.Trainer, s.Deadline, s.Order
	}
	todo := make([]*queueEntry, 0, len(q.entries))
	for i := range q.entries {
		e := &q.entries[i]
		switch e.state {
		case unrestored:
			return nil, fmt.Errorf("%w: task %d has no status", ErrInconsistentState, e.task.ID)
		case Todo:
			todo = append(todo, e)
		case Pending:
			q.addPending(e)
		case Done:
			q.done++
		case Failed:
			q.failed++
		}
	}
	slices.SortFunc(todo, func(a, b *queueEntry) int { return cmp.Compare(a.order, b.order) })
	for i, e := range todo {
		if i > 0 && todo[i-1].order == e.order {
			return nil, fmt.Errorf("%w: todo tasks %d and %d share Order %d",
				ErrInconsistentState, todo[i-1].task.ID, e.task.ID, e.order)
		}
		e.todoElem = q.todo.PushBack(e)
	}
	return q, nil
}

// unrestored marks an entry RestoreQueue has no status for yet.
const unrestored = numTaskStates

func validateStatus(s TaskStatus) error {
	switch {
	case !s.State.Valid():
		return fmt.Errorf("%w: task %d has invalid state %d", ErrInconsistentState, s.ID, int(s.State))
	case s.Failures < 0:
		return fmt.Errorf("%w: task %d has negative Failures %d", ErrInconsistentState, s.ID, s.Failures)
	case s.State == Pending && s.Trainer < 0:
		return fmt.Errorf("%w: pending task %d has no trainer", ErrInconsistentState, s.ID)
	case s.State == Pending && s.Deadline.IsZero():
		return fmt.Errorf("%w: pending task %d has no deadline", ErrInconsistentState, s.ID)
	case s.State != Pending && s.Trainer != NoTrainer:
		return fmt.Errorf("%w: %s task %d has trainer %d", ErrInconsistentState, s.State, s.ID, s.Trainer)
	case s.State != Pending && !s.Deadline.IsZero():
		return fmt.Errorf("%w: %s task %d has a deadline", ErrInconsistentState, s.State, s.ID)
	}
	return nil
}

// newEmptyQueue validates its input and builds entries in state initial,
// in no list and not counted: the caller sets the real states and counts.
func newEmptyQueue(cfg QueueConfig, tasks []Task, initial TaskState) (*Queue, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if len(tasks) == 0 {
		return nil, fmt.Errorf("%w: no tasks", ErrInvalidTask)
	}
	q := &Queue{cfg: cfg, entries: make([]queueEntry, len(tasks)), todo: list.New(),
		byTrainer: make(map[int]map[int]*queueEntry)}
	for i, t := range tasks {
		if err := validateTask(i, t); err != nil {
			return nil, err
		}
		q.entries[i] = queueEntry{task: t, state: initial, trainer: NoTrainer, heapIndex: -1}
	}
	byID := func(a, b queueEntry) int { return cmp.Compare(a.task.ID, b.task.ID) }
	if !slices.IsSortedFunc(q.entries, byID) {
		slices.SortStableFunc(q.entries, byID)
	}
	for i := 1; i < len(q.entries); i++ {
		if id := q.entries[i].task.ID; id == q.entries[i-1].task.ID {
			return nil, fmt.Errorf("%w: duplicate task ID %d at tasks[%d]", ErrInvalidTask, id, duplicateAt(tasks, id))
		}
	}
	q.dense = q.entries[0].task.ID == 0 && q.entries[len(q.entries)-1].task.ID == len(q.entries)-1
	return q, nil
}

// duplicateAt is the index in tasks of the second task with ID id.
func duplicateAt(tasks []Task, id int) int {
	seen := false
	for i, t := range tasks {
		if t.ID == id {
			if seen {
				return i
			}
			seen = true
		}
	}
	return -1
}

// entry finds the task with ID id: an index when IDs are 0..n-1 (as
// CutTasks makes them), a binary search otherwise. No map: a million tasks
// build and restore in a fraction of the save timeout.
func (q *Queue) entry(id int) (*queueEntry, bool) {
	if q.dense {
		if id < 0 || id >= len(q.entries) {
			return nil, false
		}
		return &q.entries[id], true
	}
	i, ok := slices.BinarySearchFunc(q.entries, id, func(e queueEntry, id int) int { return cmp.Compare(e.task.ID, id) })
	if !ok {
		return nil, false
	}
	return &q.entries[i], true
}

// fillTodoForPass appends every done task to todo in the current pass's
// shuffled order, resetting its failures, and marks every task changed.
func (q *Queue) fillTodoForPass() {
	// Shuffling positions in ID order shuffles the IDs the same way.
	order := make([]int, len(q.entries))
	for i := range order {
		order[i] = i
	}
	if !q.cfg.NoShuffle {
		rand.New(rand.NewPCG(q.cfg.Seed, uint64(q.pass))).Shuffle(len(order), func(i, j int) {
			order[i], order[j] = order[j], order[i]
		})
	}
	next := 0
	for _, i := range order {
		e := &q.entries[i]
		if e.state != Done {
			continue
		}
		q.done--
		e.state, e.failures, e.order = Todo, 0, next
		e.todoElem = q.todo.PushBack(e)
		next++
	}
	for i := range q.entries {
		q.markChanged(&q.entries[i])
	}
}

// Pass is the current pass number, from 0.
func (q *Queue) Pass() int { return q.pass }

// Task returns the task with the given ID.
func (q *Queue) Task(id int) (Task, bool) {
	e, ok := q.entry(id)
	if !ok {
		return Task{}, false
	}
	return e.task, true
}

// Status returns the current status of one task.
func (q *Queue) Status(id int) (TaskStatus, bool) {
	e, ok := q.entry(id)
	if !ok {
		return TaskStatus{}, false
	}
	return e.status(), true
}

// Dispatch hands the front todo task to trainer until now+Timeout.
// ErrNoTask means wait (tasks may still come back), ErrPassDone means the
// pass is over.
func (q *Queue) Dispatch(trainer int, now time.Time) (Task, error) {
	if trainer < 0 {
		return Task{}, fmt.Errorf("%w: trainer %d", ErrInvalidTrainer, trainer)
	}
	front := q.todo.Front()
	if front == nil {
		if len(q.deadlines) > 0 {
			return Task{}, fmt.Errorf("%w: pass %d has %d pending", ErrNoTask, q.pass, len(q.deadlines))
		}
		return Task{}, fmt.Errorf("%w: pass %d", ErrPassDone, q.pass)
	}
	e := front.Value.(*queueEntry)
	q.todo.Remove(front)
	e.todoElem = nil
	e.state = Pending
	e.trainer = trainer
	e.deadline = deadlineAfter(now, q.cfg.Timeout)
	q.addPending(e)
	q.markChanged(e)
	return e.task, nil
}

// deadlineAfter keeps now's monotonic clock reading, if it has one (as
// time.Now's has): deadlines are then compared by the monotonic clock, and a
// step of the wall clock neither expires a task early nor keeps it forever.
// Persisted deadlines are informational (RestoreQueue re-bases them).
func deadlineAfter(now time.Time, timeout time.Duration) time.Time {
	return now.Add(timeout)
}

// Renew is a trainer's heartbeat for a task it holds: the deadline becomes
// now+Timeout.
func (q *Queue) Renew(id, trainer int, now time.Time) error {
	e, err := q.owned(id, trainer)
	if err != nil {
		return err
	}
	e.deadline = deadlineAfter(now, q.cfg.Timeout)
	heap.Fix(&q.deadlines, e.heapIndex)
	q.markChanged(e)
	return nil
}

// RebaseDeadlines sets the deadline of every pending task to now+Timeout.
// A restoring master calls it: a stored deadline is a wall time written by
// another process, or before a step of the wall clock, and comparing it
// with this process's clock could take a task back at once, or never. Like
// a renewal, it is not a change to persist.
func (q *Queue) RebaseDeadlines(now time.Time) {
	deadline := deadlineAfter(now, q.cfg.Timeout)
	for _, e := range q.deadlines {
		e.deadline = deadline
	}
	heap.Init(&q.deadlines)
}

// RenewTrainer pushes the deadline of every task trainer holds to
// now+Timeout: the trainer is known to be alive, and a live trainer keeps
// its tasks however slow it is. A renewal is not a change to persist:
// RestoreQueue re-bases deadlines anyway. It returns how many were renewed.
func (q *Queue) RenewTrainer(trainer int, now time.Time) int {
	deadline := deadlineAfter(now, q.cfg.Timeout)
	for _, e := range q.byTrainer[trainer] {
		e.deadline = deadline
		heap.Fix(&q.deadlines, e.heapIndex)
	}
	return len(q.byTrainer[trainer])
}

// Finish marks a task the trainer holds as done. A stale finish (the task
// was taken back, handed to someone else, or is already done) returns
// ErrNotOwner and changes nothing.
func (q *Queue) Finish(id, trainer int) error {
	e, err := q.owned(id, trainer)
	if err != nil {
		return err
	}
	q.removePending(e)
	e.state = Done
	q.done++
	q.markChanged(e)
	return nil
}

// Fail records a failure of a task the trainer holds: the task goes back to
// the front of todo, or becomes failed once it has more than MaxFailures
// failures in this pass.
func (q *Queue) Fail(id, trainer int) error {
	e, err := q.owned(id, trainer)
	if err != nil {
		return err
	}
	q.removePending(e)
	q.countFailure(e)
	return nil
}

// Expire takes back every pending task whose deadline is at or before now,
// counting a failure for each as Fail does. It returns their IDs ascending;
// those re-queued sit at the front of todo in that order.
func (q *Queue) Expire(now time.Time) []int {
	var expired []*queueEntry
	for len(q.deadlines) > 0 && !q.deadlines[0].deadline.After(now) {
		e := q.deadlines[0]
		q.removePending(e)
		expired = append(expired, e)
	}
	return q.requeue(expired, q.countFailure)
}

// ReleaseTrainer takes back every task of a trainer known to be dead,
// without counting failures: its death says nothing about the tasks. It
// returns their IDs ascending, which is also their order at the front of
// todo.
func (q *Queue) ReleaseTrainer(trainer int) []int {
	held := q.byTrainer[trainer]
	released := make([]*queueEntry, 0, len(held))
	for _, e := range held {
		released = append(released, e)
	}
	for _, e := range released {
		q.removePending(e)
	}
	return q.requeue(released, q.pushFront)
}

// requeue applies put to entries in descending ID order, so that those
// pushed to the front of todo end up ascending, and returns the IDs
// ascending.
func (q *Queue) requeue(entries []*queueEntry, put func(*queueEntry)) []int {
	if len(entries) == 0 {
		return nil
	}
	slices.SortFunc(entries, func(a, b *queueEntry) int { return cmp.Compare(b.task.ID, a.task.ID) })
	ids := make([]int, len(entries))
	for i, e := range entries {
		put(e)
		ids[len(entries)-1-i] = e.task.ID
	}
	return ids
}

// Counts returns the number of tasks in each state.
func (q *Queue) Counts() Counts {
	return Counts{Todo: q.todo.Len(), Pending: len(q.deadlines), Done: q.done, Failed: q.failed}
}

// PassDone reports whether no task is todo or pending.
func (q *Queue) PassDone() bool { return q.todo.Len() == 0 && len(q.deadlines) == 0 }

// NextPass starts the next pass: done tasks become todo again, with their
// failure counts reset, in the new pass's shuffled order; failed tasks stay
// failed for good. Every task counts as changed.
func (q *Queue) NextPass() error {
	if !q.PassDone() {
		return fmt.Errorf("%w: pass %d has %d todo and %d pending",
			ErrPassNotDone, q.pass, q.todo.Len(), len(q.deadlines))
	}
	q.pass++
	q.fillTodoForPass()
	return nil
}

// Statuses returns every task's status, by ascending ID.
func (q *Queue) Statuses() []TaskStatus {
	out := make([]TaskStatus, len(q.entries))
	for i := range q.entries {
		out[i] = q.entries[i].status()
	}
	return out
}

// TakeChanges returns the current pass and the status of every task that
// changed since the previous call (by ascending ID, each once), and forgets
// them. Persisting the pass and these statuses after every operation keeps
// a store from which RestoreQueue rebuilds the queue.
func (q *Queue) TakeChanges() (pass int, changed []TaskStatus) {
	if len(q.changed) == 0 {
		return q.pass, nil
	}
	slices.Sort(q.changed)
	changed = make([]TaskStatus, len(q.changed))
	for i, id := range q.changed {
		e, _ := q.entry(id)
		changed[i] = e.status()
		e.changed = false
	}
	q.changed = q.changed[:0]
	return q.pass, changed
}

func (q *Queue) owned(id, trainer int) (*queueEntry, error) {
	e, ok := q.entry(id)
	if !ok {
		return nil, fmt.Errorf("%w: task %d", ErrUnknownTask, id)
	}
	if e.state != Pending {
		return nil, fmt.Errorf("%w: task %d is %s, not pending for trainer %d", ErrNotOwner, id, e.state, trainer)
	}
	if e.trainer != trainer {
		return nil, fmt.Errorf("%w: task %d is pending for trainer %d, not %d", ErrNotOwner, id, e.trainer, trainer)
	}
	return e, nil
}

func (q *Queue) addPending(e *queueEntry) {
	heap.Push(&q.deadlines, e)
	held := q.byTrainer[e.trainer]
	if held == nil {
		held = make(map[int]*queueEntry)
		q.byTrainer[e.trainer] = held
	}
	held[e.task.ID] = e
}

// removePending takes e out of the pending structures and clears its owner;
// the caller sets the new state.
func (q *Queue) removePending(e *queueEntry) {
	heap.Remove(&q.deadlines, e.heapIndex)
	held := q.byTrainer[e.trainer]
	delete(held, e.task.ID)
	if len(held) == 0 {
		delete(q.byTrainer, e.trainer)
	}
	e.trainer = NoTrainer
	e.deadline = time.Time{}
}

func (q *Queue) countFailure(e *queueEntry) {
	e.failures++
	if e.failures > q.cfg.MaxFailures {
		e.state = Failed
		q.failed++
		q.markChanged(e)
		return
	}
	q.pushFront(e)
}

// pushFront gives e an Order below the current front's so that a re-queue
// changes no other task's status.
func (q *Queue) pushFront(e *queueEntry) {
	if front := q.todo.Front(); front != nil {
		e.order = front.Value.(*queueEntry).order - 1
	}
	e.state = Todo
	e.todoElem = q.todo.PushFront(e)
	q.markChanged(e)
}

func (q *Queue) markChanged(e *queueEntry) {
	if !e.changed {
		e.changed = true
		q.changed = append(q.changed, e.task.ID)
	}
}

// deadlineHeap is a min-heap of pending tasks by deadline (ties by ID, so
// the layout does not depend on map iteration).
type deadlineHeap []*queueEntry

func (h deadlineHeap) Len() int { return len(h) }

func (h deadlineHeap) Less(i, j int) bool {
	if c := h[i].deadline.Compare(h[j].deadline); c != 0 {
		return c < 0
	}
	return h[i].task.ID < h[j].task.ID
}

func (h deadlineHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].heapIndex = i
	h[j].heapIndex = j
}

func (h *deadlineHeap) Push(x any) {
	e := x.(*queueEntry)
	e.heapIndex = len(*h)
	*h = append(*h, e)
}

func (h *deadlineHeap) Pop() any {
	old := *h
	e := old[len(old)-1]
	old[len(old)-1] = nil
	e.heapIndex = -1
	*h = old[:len(old)-1]
	return e
}
