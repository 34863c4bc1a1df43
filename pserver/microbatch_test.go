package pserver

import (
	"math"
	"testing"

	"github.com/gtrain/gtrain/jobspec"
)

// TestSyncSumIsInMicroBatchOrder: whatever order the micro-batches arrive
// in, and however often one is repeated, the step applies the sum
// ((g0+g1)+g2)+g3 started from g0, divided by the step's record count: the
// bits of a single trainer pushing them in order.
func TestSyncSumIsInMicroBatchOrder(t *testing.T) {
	// Values whose float32 sum depends on the order of addition.
	vals := []float32{1e8, 1, -1e8, 3.14159}
	recs := []int64{4, 4, 4, 1}
	f := func(mb int) func(b, i int) float32 {
		return func(b, i int) float32 { return vals[mb] * float32(1+i+b) }
	}
	run := func(order []int) []float32 {
		s := testShard(t, jobspec.ModeSync, len(vals), "sgd")
		for n, mb := range order {
			applied, _, err := s.Push(grad(s, mb, 0, recs[mb], f(mb)))
			if err != nil {
				t.Fatal(err)
			}
			if applied && n != len(order)-1 {
				t.Fatalf("order %v: applied at push %d of %d", order, n+1, len(order))
			}
		}
		if s.Step() != 1 {
			t.Fatalf("order %v: step %d, want 1", order, s.Step())
		}
		return params(s)
	}
	want := run([]int{0, 1, 2, 3})
	// The expected first element, computed the way the step must: sum from
	// micro-batch 0 in order, times 1/13, sgd with lr 0.1 on the initial 0.
	sum := vals[0] * 1
	for _, v := range vals[1:] {
		sum += v * 1
	}
	exp := float32(0) - float32(0.1)*(sum*(float32(1)/float32(13)))
	if math.Float32bits(want[0]) != math.Float32bits(exp) {
		t.Fatalf("first element %v, want %v", want[0], exp)
	}
	for _, order := range [][]int{{3, 2, 1, 0}, {2, 0, 3, 1}, {1, 1, 3, 0, 3, 2}, {0, 0, 0, 2, 1, 3}} {
		got := run(order)
		for i := range want {
			if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
				t.Fatalf("order %v: element %d is %v, want %v", order, i, got[i], want[i])
			}
		}
	}
}

// TestSyncKeepsOnlyPushesAheadOfTheirTurn: the micro-batches summed so far
// are folded into one buffer, so in-order pushes hold no extra memory.
func TestSyncKeepsOnlyPushesAheadOfTheirTurn(t *testing.T) {
	s := testShard(t, jobspec.ModeSync, 8, "sgd")
	one := func(int, int) float32 { return 1 }
	for mb := 0; mb < 5; mb++ {
		s.Push(grad(s, mb, 0, 1, one))
	}
	s.Push(grad(s, 7, 0, 1, one))
	if s.gather.next != 5 || len(s.gather.pending) != 1 {
		t.Fatalf("next %d, %d pending; want 5 and 1 (only micro-batch 7 waits)", s.gather.next, len(s.gather.pending))
	}
}
