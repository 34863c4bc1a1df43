package core

import (
	"reflect"
	"slices"
	"testing"

	"github.com/gtrain/gtrain/dataset"
)

type planRecord struct {
	file         string
	chunk, index int
}

// planRecords lists the records a plan reads, in stream order.
func planRecords(p *PassPlan) []planRecord {
	var got []planRecord
	for s := p.StartStep; s < p.EndStep(); s++ {
		for k := range p.MicroBatches {
			for _, sl := range p.Slices(s, k) {
				for i := range sl.Count {
					got = append(got, planRecord{sl.File, sl.Chunk, sl.First + i})
				}
			}
		}
	}
	return got
}

// TestPassPlanReadsEachTaskInItsRecordOrder: with a shuffled record order
// the plan still reads every record of the pass once, task after task, and
// within each task in dataset.RecordOrder of (seed, pass, task); another
// pass reads another order, the same pass rebuilt the same one, and which
// tasks a step touches does not change.
func TestPassPlanReadsEachTaskInItsRecordOrder(t *testing.T) {
	stored := planRecords(planFixture())
	byPass := map[int][]planRecord{}
	for _, pass := range []int{0, 1} {
		p := planFixture()
		p.Pass = pass
		p.Order = NewRecordOrder(9, true, pass)
		got := planRecords(p)
		if !slices.Equal(got, planRecords(rebuilt(p))) {
			t.Fatalf("pass %d: a rebuilt plan reads another order", pass)
		}
		if !sameRecords(got, stored) {
			t.Fatalf("pass %d reads %v, not each of %v once", pass, got, stored)
		}
		at := 0
		for _, task := range p.tasks {
			for i, r := range dataset.RecordOrder(true, 9, pass, task.ID, task.Records) {
				if got[at+i] != stored[at+r] {
					t.Fatalf("pass %d task %d position %d: read %v, want record %d of the task, %v", pass, task.ID, i, got[at+i], r, stored[at+r])
				}
			}
			at += task.Records
		}
		for s := p.StartStep; s < p.EndStep(); s++ {
			s1, f1 := p.TasksTouched(s)
			s2, f2 := planFixture().TasksTouched(s)
			if !equalInts(s1, s2) || !equalInts(f1, f2) {
				t.Errorf("pass %d step %d: tasks touched %v %v, stored order %v %v", pass, s, s1, f1, s2, f2)
			}
		}
		byPass[pass] = got
	}
	if slices.Equal(byPass[0], byPass[1]) {
		t.Errorf("passes 0 and 1 read the same order %v", byPass[0])
	}
	if slices.Equal(byPass[0], stored) {
		t.Errorf("the shuffled pass reads the stored order")
	}
}

// TestPassPlanWithoutShuffleKeepsSlices: data.shuffle false gives exactly
// the slices of the stored order, whole runs of each chunk.
func TestPassPlanWithoutShuffleKeepsSlices(t *testing.T) {
	plain, off := planFixture(), planFixture()
	off.Order = NewRecordOrder(9, false, 0)
	for s := plain.StartStep; s < plain.EndStep(); s++ {
		for k := range plain.MicroBatches {
			if a, b := plain.Slices(s, k), off.Slices(s, k); !reflect.DeepEqual(a, b) {
				t.Errorf("step %d trainer %d: %v without shuffle, %v in the stored order", s, k, b, a)
			}
		}
	}
}

func rebuilt(p *PassPlan) *PassPlan {
	q := NewPassPlan(p.Pass, p.StartStep, p.MicroBatches, p.Batch, p.tasks, map[int][]int{7: {3, 2}, 2: {4}, 5: {1, 2}})
	q.Order = NewRecordOrder(p.Order.Seed, p.Order.Shuffle, p.Order.Pass)
	return q
}

// sameRecords reports whether a and b hold the same records, each as often.
func sameRecords(a, b []planRecord) bool {
	count := map[planRecord]int{}
	for _, r := range a {
		count[r]++
	}
	for _, r := range b {
		count[r]--
	}
	for _, n := range count {
		if n != 0 {
			return false
		}
	}
	return true
}

// TestQueueNoShuffleDispatchesInStoredOrder: data.shuffle false dispatches
// every pass in task ID order; the default shuffles each pass differently.
func TestQueueNoShuffleDispatchesInStoredOrder(t *testing.T) {
	tasks := makeQueueTasks(20)
	ids := make([]int, len(tasks))
	for i, task := range tasks {
		ids[i] = task.ID
	}
	slices.Sort(ids)
	cfg := queueTestConfig()
	cfg.NoShuffle = true
	q := mustQueue(t, cfg, tasks)
	for pass := range 3 {
		if got := runQueuePass(t, q, queueEpoch); !slices.Equal(got, ids) {
			t.Fatalf("pass %d without shuffle dispatched %v, want %v", pass, got, ids)
		}
		if err := q.NextPass(); err != nil {
			t.Fatal(err)
		}
	}
	q = mustQueue(t, queueTestConfig(), tasks)
	first := runQueuePass(t, q, queueEpoch)
	if err := q.NextPass(); err != nil {
		t.Fatal(err)
	}
	if second := runQueuePass(t, q, queueEpoch); slices.Equal(first, second) || slices.Equal(first, ids) {
		t.Errorf("shuffled passes dispatched %v then %v (stored %v)", first, second, ids)
	}
}
