package pserver

import (
	"context"
	"math"
	"testing"

	"github.com/gtrain/gtrain/jobspec"
	"github.com/gtrain/gtrain/pserver/client"
)

// TestOptimizerSlotsAgreeWithTheSpec: the master sizes a pass model's
// optimizer state by jobspec's count, the shard by its optimizer's.
func TestOptimizerSlotsAgreeWithTheSpec(t *testing.T) {
	for _, kind := range []string{jobspec.OptimizerSGD, jobspec.OptimizerMomentum, jobspec.OptimizerAdagrad, jobspec.OptimizerAdam} {
		opt, err := NewOptimizer(OptimizerConfig{Kind: kind, LearningRate: 0.1}.WithDefaults())
		if err != nil {
			t.Fatal(err)
		}
		if got, want := (jobspec.OptimizerSpec{Kind: kind}).Slots(), opt.Slots(); got != want {
			t.Errorf("%s: jobspec says %d slots, the optimizer keeps %d", kind, got, want)
		}
	}
}

// TestWarmStartWithOptimizerStateContinuesBitForBit: a shard started from
// another's parameters and adam moments, pulled over real gRPC after 3
// steps, with StepBase 3, takes the next two steps exactly as the first
// shard does; without StepBase (bias correction restarted) it does not.
func TestWarmStartWithOptimizerStateContinuesBitForBit(t *testing.T) {
	g := func(step int) func(b, i int) float32 {
		return func(b, i int) float32 { return float32(math.Sin(float64(step*7+b*3+i))) * 0.5 }
	}
	a := testShard(t, jobspec.ModeSync, 1, "adam")
	push := func(s *Shard, step int64, f func(b, i int) float32) {
		t.Helper()
		if _, _, err := s.Push(grad(s, 0, step, 4, f)); err != nil {
			t.Fatal(err)
		}
	}
	for step := range 3 {
		push(a, int64(step), g(step))
	}
	pulled := [][]float32{make([]float32, 5), make([]float32, 3)}
	state := [][][]float32{{make([]float32, 5), make([]float32, 3)}, {make([]float32, 5), make([]float32, 3)}}
	if lo, _, err := serveShard(t, a, nil).PullState(context.Background(), 3, 0, pulled, state); err != nil || lo != 3 {
		t.Fatalf("pull with state: step %d, %v", lo, err)
	}
	if state[0][0][0] == 0 || state[1][1][2] == 0 {
		t.Fatalf("adam moments not pulled: %v", state)
	}
	warm := func(base int64) *Shard {
		cfg := ShardConfig{Mode: jobspec.ModeSync, MicroBatches: 1, Blocks: a.Blocks(),
			Optimizer: OptimizerConfig{Kind: "adam", LearningRate: 0.1}.WithDefaults(), StepBase: base,
			InitSlots: func(b client.Block, k int, dst []float32) { copy(dst, state[k][b.Param][b.Offset:]) }}
		s, err := NewShard(cfg, func(b client.Block, dst []float32) { copy(dst, pulled[b.Param][b.Offset:]) })
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	b, unbased := warm(3), warm(0)
	for step := range 2 {
		push(a, int64(3+step), g(3+step))
		push(b, int64(step), g(3+step))
		push(unbased, int64(step), g(3+step))
	}
	want, got, other := params(a), params(b), params(unbased)
	same := true
	for i := range want {
		if math.Float32bits(want[i]) != math.Float32bits(got[i]) {
			t.Fatalf("element %d: %v after the warm start, %v uninterrupted", i, got[i], want[i])
		}
		same = same && want[i] == other[i]
	}
	if same {
		t.Error("without StepBase the warm shard matched too: the test does not see adam's step count")
	}
}
