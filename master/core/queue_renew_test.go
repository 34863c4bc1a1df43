package core

import (
	"slices"
	"testing"
	"time"
)

func TestQueueRenewTrainerAndRebase(t *testing.T) {
	cfg := queueTestConfig()
	q := mustQueue(t, cfg, makeQueueTasks(6))
	now := queueEpoch
	a := mustDispatchTask(t, q, 0, now)
	b := mustDispatchTask(t, q, 1, now.Add(time.Second))
	c := mustDispatchTask(t, q, 0, now.Add(2*time.Second))
	q.TakeChanges()
	// Trainer 0 is alive: both its tasks move on, trainer 1's does not.
	if n := q.RenewTrainer(0, now.Add(cfg.Timeout)); n != 2 {
		t.Fatalf("RenewTrainer(0) renewed %d tasks, want 2", n)
	}
	if q.RenewTrainer(5, now) != 0 {
		t.Fatal("RenewTrainer of a trainer holding nothing renewed something")
	}
	if _, changed := q.TakeChanges(); changed != nil {
		t.Fatalf("a renewal is a change to persist: %+v", changed)
	}
	if got := q.Expire(now.Add(cfg.Timeout + time.Second)); !slices.Equal(got, []int{b.ID}) {
		t.Fatalf("Expire after renewing trainer 0 = %v, want only trainer 1's task %d", got, b.ID)
	}
	// A restore's re-base: every pending deadline one Timeout from then,
	// whatever was stored.
	later := now.Add(time.Hour)
	q.RebaseDeadlines(later)
	for _, id := range []int{a.ID, c.ID} {
		if st, _ := q.Status(id); !st.Deadline.Equal(later.Add(cfg.Timeout)) {
			t.Fatalf("task %d after the re-base: %+v, want deadline %v", id, st, later.Add(cfg.Timeout))
		}
	}
	if got := q.Expire(later.Add(cfg.Timeout - time.Nanosecond)); got != nil {
		t.Fatalf("Expire before the re-based deadline took %v", got)
	}
	if got := q.Expire(later.Add(cfg.Timeout)); !slices.Equal(got, sortedIDs(a.ID, c.ID)) {
		t.Fatalf("Expire at the re-based deadline = %v, want %v", got, sortedIDs(a.ID, c.ID))
	}
}

func sortedIDs(ids ...int) []int {
	slices.Sort(ids)
	return ids
}
