package core

import "testing"

func planFixture() *PassPlan {
	// 3 tasks: 5 records (chunks 3+2), 4 records (one chunk), 3 records (chunks 1+2).
	tasks := []Task{{ID: 7, File: "a", FirstChunk: 0, Chunks: 2, Records: 5}, {ID: 2, File: "b", FirstChunk: 4, Chunks: 1, Records: 4}, {ID: 5, File: "c", FirstChunk: 1, Chunks: 2, Records: 3}}
	chunks := map[int][]int{7: {3, 2}, 2: {4}, 5: {1, 2}}
	return NewPassPlan(0, 10, 2, 2, tasks, chunks)
}

func TestPassPlanCoversEveryRecordOnceInOrder(t *testing.T) {
	p := planFixture()
	if p.Records() != 12 || p.Steps() != 3 || p.EndStep() != 13 {
		t.Fatalf("records %d steps %d end %d, want 12 3 13", p.Records(), p.Steps(), p.EndStep())
	}
	type rec struct {
		file         string
		chunk, index int
	}
	var got []rec
	for s := p.StartStep; s < p.EndStep(); s++ {
		for k := 0; k < p.MicroBatches; k++ {
			n := 0
			for _, sl := range p.Slices(s, k) {
				for i := 0; i < sl.Count; i++ {
					got = append(got, rec{sl.File, sl.Chunk, sl.First + i})
				}
				n += sl.Count
			}
			if n > p.Batch {
				t.Fatalf("step %d trainer %d got %d records > batch %d", s, k, n, p.Batch)
			}
		}
	}
	want := []rec{{"a", 0, 0}, {"a", 0, 1}, {"a", 0, 2}, {"a", 1, 0}, {"a", 1, 1}, {"b", 4, 0}, {"b", 4, 1}, {"b", 4, 2}, {"b", 4, 3}, {"c", 1, 0}, {"c", 2, 0}, {"c", 2, 1}}
	if len(got) != len(want) {
		t.Fatalf("got %d records, want %d: %v", len(got), len(want), got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("record %d = %v, want %v", i, got[i], want[i])
		}
	}
}

func TestPassPlanLastStepMayLeaveTrainersEmpty(t *testing.T) {
	p := NewPassPlan(1, 0, 3, 2, []Task{{ID: 0, File: "x", Chunks: 1, Records: 7}}, map[int][]int{0: {7}})
	if p.Steps() != 2 {
		t.Fatalf("steps %d, want 2", p.Steps())
	}
	if s := p.Slices(1, 0); len(s) != 1 || s[0].Count != 1 || s[0].First != 6 {
		t.Fatalf("trainer 0 at last step: %+v, want record 6 only", s)
	}
	if s := p.Slices(1, 1); len(s) != 0 {
		t.Fatalf("trainer 1 at last step: %+v, want nothing", s)
	}
}

func TestPassPlanTasksTouched(t *testing.T) {
	p := planFixture()
	cases := []struct {
		step              int64
		started, finished []int
	}{
		{10, []int{7}, nil},            // records 0-3
		{11, []int{7, 2}, []int{7}},    // records 4-7
		{12, []int{2, 5}, []int{2, 5}}, // records 8-11: task 7 was settled by step 11
	}
	for _, c := range cases {
		s, f := p.TasksTouched(c.step)
		if !equalInts(s, c.started) || !equalInts(f, c.finished) {
			t.Errorf("step %d: started %v finished %v, want %v %v", c.step, s, f, c.started, c.finished)
		}
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
