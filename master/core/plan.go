package core

import "sort"

// Slice is a run of Count records starting at record First of a chunk.
type Slice struct {
	File  string
	Chunk int
	First int
	Count int
}

// PassPlan is a sync pass laid out as one record stream: the pass's tasks in
// queue order, concatenated. Global step s of the pass covers the stream's
// records [l*G, (l+1)*G) with l = s-StartStep and G = MicroBatches*Batch (the
// global batch); micro-batch j of the step is its j-th run of Batch records,
// whichever trainer computes it. The plan is a pure function of the task
// order and the global batch, so every master (a restarted one too) computes
// the same steps, and the trainer count has no part in it.
type PassPlan struct {
	Pass         int
	StartStep    int64
	MicroBatches int
	Batch        int
	tasks        []Task
	chunks       [][]int // records per chunk, per task
	ends         []int   // cumulative record count at the end of each task

	// Order is which record of a task each stream position reads (nil:
	// the stored order); set by the Core from the job's seed and data.shuffle.
	Order *RecordOrder
}

// NewPassPlan lays out tasks (in order) for a pass starting at startStep.
func NewPassPlan(pass int, startStep int64, microBatches, batch int, tasks []Task, chunkRecords map[int][]int) *PassPlan {
	p := &PassPlan{Pass: pass, StartStep: startStep, MicroBatches: microBatches, Batch: batch, tasks: tasks}
	total := 0
	for _, t := range tasks {
		total += t.Records
		p.ends = append(p.ends, total)
		p.chunks = append(p.chunks, chunkRecords[t.ID])
	}
	return p
}

// Records in the pass.
func (p *PassPlan) Records() int {
	if len(p.ends) == 0 {
		return 0
	}
	return p.ends[len(p.ends)-1]
}

// Steps in the pass.
func (p *PassPlan) Steps() int64 {
	g := p.MicroBatches * p.Batch
	return int64((p.Records() + g - 1) / g)
}

// EndStep is the first global step after the pass.
func (p *PassPlan) EndStep() int64 { return p.StartStep + p.Steps() }

// Contains reports whether global step s belongs to the pass.
func (p *PassPlan) Contains(s int64) bool { return s >= p.StartStep && s < p.EndStep() }

// stepRange is the stream range of global step s.
func (p *PassPlan) stepRange(s int64) (lo, hi int) {
	g := p.MicroBatches * p.Batch
	lo = int(s-p.StartStep) * g
	return lo, min(lo+g, p.Records())
}

// microBatchRange is the stream range of micro-batch mb of global step s
// (empty, lo >= hi, past the end of the pass).
func (p *PassPlan) microBatchRange(s int64, mb int) (lo, hi int) {
	lo, hi = p.stepRange(s)
	return lo + mb*p.Batch, min(lo+(mb+1)*p.Batch, hi)
}

// MicroBatchRecords is the record count of micro-batch mb of global step s:
// what a trainer computing it reports.
func (p *PassPlan) MicroBatchRecords(s int64, mb int) int {
	lo, hi := p.microBatchRange(s, mb)
	return max(0, hi-lo)
}

// Slices returns the records of micro-batch mb of global step s (possibly
// nothing: the last step of a pass may not reach every micro-batch).
func (p *PassPlan) Slices(s int64, mb int) []Slice {
	lo, hi := p.microBatchRange(s, mb)
	var out []Slice
	for lo < hi {
		ti := sort.SearchInts(p.ends, lo+1) // first task whose end > lo
		t := p.tasks[ti]
		pos := lo - (p.ends[ti] - t.Records) // offset within the task
		take := min(t.Records-pos, hi-lo)
		out = p.Order.taskSlices(out, t, p.chunks[ti], pos, take)
		lo += take
	}
	return out
}

// TasksTouched returns the tasks step s reads into (and any ending right at
// its start), and of those the ones whose every record lies at or before
// its end: once step s is applied, the first are in flight and the second
// are done. Tasks wholly before it were settled by the steps before: a
// commit looks only at its own step's tasks, not at the pass so far.
func (p *PassPlan) TasksTouched(s int64) (started, finished []int) {
	lo, hi := p.stepRange(s)
	for i := sort.SearchInts(p.ends, lo); i < len(p.tasks); i++ {
		t := p.tasks[i]
		if p.ends[i]-t.Records >= hi {
			break
		}
		started = append(started, t.ID)
		if p.ends[i] <= hi {
			finished = append(finished, t.ID)
		}
	}
	return started, finished
}
