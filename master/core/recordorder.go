package core

import (
	"sort"

	"github.com/gtrain/gtrain/dataset"
)

// maxCachedOrders bounds RecordOrder's cache: a sync step reads a few tasks
// at a time, so the orders of the tasks in flight stay cached while a pass of
// a million tasks does not keep a million orders.
const maxCachedOrders = 64

// RecordOrder maps a task's stream positions to the records read there in
// one pass: dataset.RecordOrder of (Seed, pass, task), the same in every
// master. A nil RecordOrder, or one without Shuffle, reads the stored order.
// Like the Core that holds it, it is not safe for concurrent use.
type RecordOrder struct {
	Seed    uint64
	Shuffle bool
	Pass    int
	orders  map[int][]int // task ID -> its order, for Pass
}

// NewRecordOrder is the record order of one pass.
func NewRecordOrder(seed uint64, shuffle bool, pass int) *RecordOrder {
	return &RecordOrder{Seed: seed, Shuffle: shuffle, Pass: pass}
}

// of returns the order of task t, or nil for the stored order.
func (o *RecordOrder) of(t Task) []int {
	if o == nil || !o.Shuffle {
		return nil
	}
	if order, ok := o.orders[t.ID]; ok {
		return order
	}
	if o.orders == nil || len(o.orders) >= maxCachedOrders {
		o.orders = map[int][]int{}
	}
	order := dataset.RecordOrder(true, o.Seed, o.Pass, t.ID, t.Records)
	o.orders[t.ID] = order
	return order
}

// taskSlices appends to out the slices that read stream positions
// [pos, pos+count) of task t, whose chunks hold chunks[i] records each.
// Consecutive records of one chunk become one slice, so the stored order
// reads whole runs of a chunk and a shuffled order mostly single records.
func (o *RecordOrder) taskSlices(out []Slice, t Task, chunks []int, pos, count int) []Slice {
	order := o.of(t)
	starts := make([]int, len(chunks)) // index of each chunk's first record within the task
	for i := 1; i < len(chunks); i++ {
		starts[i] = starts[i-1] + chunks[i-1]
	}
	first := len(out) // slices of this call; earlier ones belong to other tasks
	for i := pos; i < pos+count; i++ {
		r := i
		if order != nil {
			r = order[i]
		}
		ci := sort.SearchInts(starts, r+1) - 1 // the last chunk starting at or before r
		at := r - starts[ci]
		if n := len(out); n > first && out[n-1].Chunk == t.FirstChunk+ci && out[n-1].First+out[n-1].Count == at {
			out[n-1].Count++
			continue
		}
		out = append(out, Slice{File: t.File, Chunk: t.FirstChunk + ci, First: at, Count: 1})
	}
	return out
}
