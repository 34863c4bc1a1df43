package core

import (
	"fmt"
	"time"
)

// Task is a unit of work handed to one trainer: a run of consecutive chunks
// of one record shard. Records is informational (progress and sample
// accounting); the queue never interprets File or the chunk range.
type Task struct {
	ID         int
	File       string
	FirstChunk int
	Chunks     int
	Records    int
}

// TaskState is where a task stands within the current pass.
type TaskState int

// The zero value is Todo so that a freshly built status is a task waiting
// for dispatch, never an accidental "done".
const (
	Todo TaskState = iota
	Pending
	Done
	Failed
	numTaskStates
)

// String returns the lowercase name used in status JSON and logs.
func (s TaskState) String() string {
	switch s {
	case Todo:
		return "todo"
	case Pending:
		return "pending"
	case Done:
		return "done"
	case Failed:
		return "failed"
	default:
		return fmt.Sprintf("TaskState(%d)", int(s))
	}
}

// Valid reports whether s is one of the states above (a stored status may
// hold anything).
func (s TaskState) Valid() bool { return s >= Todo && s < numTaskStates }

// TaskStatus is the persisted, per-task part of the queue's state: enough,
// together with the pass number and the task list, to rebuild the queue.
type TaskStatus struct {
	ID       int
	State    TaskState
	Failures int // failures in the current pass; reset when a pass starts
	Trainer  int // owner while pending, -1 otherwise
	// Deadline is when a pending task is taken back from its trainer; zero
	// unless pending. In memory it carries the monotonic clock reading of
	// the time it was set from; the stored copy is informational, as a
	// restore re-bases it (see RestoreQueue).
	Deadline time.Time
	// Order sorts the todo list: the front of todo has the smallest Order.
	// Tasks re-queued at the front get a smaller Order than any task already
	// waiting, so a re-queue changes only that one task's status. For tasks
	// that are not todo it keeps the value they last had in todo.
	Order int
}

// validateTask rejects tasks the queue could not track or that no trainer
// could read; it does not check that File exists.
func validateTask(index int, t Task) error {
	switch {
	case t.ID < 0:
		return fmt.Errorf("%w: tasks[%d] has negative ID %d", ErrInvalidTask, index, t.ID)
	case t.FirstChunk < 0:
		return fmt.Errorf("%w: task %d has negative FirstChunk %d", ErrInvalidTask, t.ID, t.FirstChunk)
	case t.Chunks < 0:
		return fmt.Errorf("%w: task %d has negative Chunks %d", ErrInvalidTask, t.ID, t.Chunks)
	case t.Records < 0:
		return fmt.Errorf("%w: task %d has negative Records %d", ErrInvalidTask, t.ID, t.Records)
	}
	return nil
}
