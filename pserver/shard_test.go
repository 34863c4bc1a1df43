package pserver

import (
	"errors"
	"math"
	"testing"

	"github.com/gtrain/gtrain/jobspec"
	"github.com/gtrain/gtrain/pserver/client"
)

func testShard(t *testing.T, mode jobspec.Mode, trainers int, opt string) *Shard {
	t.Helper()
	blocks, err := client.Partition([]int{5, 3}, 1, 4)
	if err != nil {
		t.Fatal(err)
	}
	s, err := NewShard(ShardConfig{Mode: mode, MicroBatches: trainers, Blocks: blocks,
		Optimizer: OptimizerConfig{Kind: opt, LearningRate: 0.1}.WithDefaults()},
		func(b client.Block, dst []float32) {
			for i := range dst {
				dst[i] = float32(b.Param*10 + b.Offset + i)
			}
		})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// grad builds a gradient whose element i of block b is f(b, i).
func grad(s *Shard, trainer int, step, records int64, f func(b, i int) float32) *Gradient {
	g := s.NewGradient(trainer, step, records)
	for _, b := range s.Blocks() {
		vals := make([]float32, b.Len)
		for i := range vals {
			vals[i] = f(b.ID, i)
		}
		if err := g.Write(b.ID, 0, vals); err != nil {
			panic(err)
		}
	}
	return g
}

func params(s *Shard) []float32 {
	var out []float32
	_ = s.View(func(_ int64, _ client.Block, p []float32) error { out = append(out, p...); return nil })
	return out
}

func TestSyncStepWaitsForEveryTrainerAndIsOrderIndependent(t *testing.T) {
	g0 := func(b, i int) float32 { return float32(0.1*float64(i+1)) + float32(b)/3 }
	g1 := func(b, i int) float32 { return float32(-0.37*float64(i)) + 1e-3 }
	run := func(order []int) []float32 {
		s := testShard(t, jobspec.ModeSync, 2, "adam")
		fs := []func(int, int) float32{g0, g1}
		recs := []int64{20, 7}
		for n, tr := range order {
			applied, step, err := s.Push(grad(s, tr, 0, recs[tr], fs[tr]))
			if err != nil {
				t.Fatal(err)
			}
			if applied != (n == len(order)-1) || step != int64(map[bool]int{true: 1, false: 0}[applied]) {
				t.Fatalf("push %d of trainer %d: applied=%v step=%d", n, tr, applied, step)
			}
		}
		return params(s)
	}
	a, b := run([]int{0, 1}), run([]int{1, 0})
	for i := range a {
		if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
			t.Fatalf("element %d differs by arrival order: %v vs %v", i, a[i], b[i])
		}
	}
}

func TestSyncStepIsRecordWeightedMean(t *testing.T) {
	// Trainer 0: 3 records with gradient sum 3 per element; trainer 1: 1 record, sum 5.
	// The mean over 4 records is 2; sgd lr 0.1 moves every element by -0.2.
	s := testShard(t, jobspec.ModeSync, 2, "sgd")
	before := params(s)
	s.Push(grad(s, 0, 0, 3, func(int, int) float32 { return 3 }))
	s.Push(grad(s, 1, 0, 1, func(int, int) float32 { return 5 }))
	after := params(s)
	for i := range before {
		if d := before[i] - after[i]; math.Abs(float64(d)-0.2) > 1e-5 {
			t.Fatalf("element %d moved by %v, want 0.2", i, d)
		}
	}
}

func TestSyncRejectsStaleAndFutureSteps(t *testing.T) {
	s := testShard(t, jobspec.ModeSync, 1, "sgd")
	if _, _, err := s.Push(grad(s, 0, 1, 1, func(int, int) float32 { return 1 })); !errors.Is(err, ErrFutureStep) {
		t.Fatalf("future push: %v", err)
	}
	if _, _, err := s.Push(grad(s, 0, 0, 1, func(int, int) float32 { return 1 })); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.Push(grad(s, 0, 0, 1, func(int, int) float32 { return 1 })); !errors.Is(err, ErrStaleStep) {
		t.Fatalf("stale push: %v", err)
	}
	if _, _, err := s.Push(grad(s, 3, 1, 1, func(int, int) float32 { return 1 })); !errors.Is(err, ErrBadMicroBatch) {
		t.Fatalf("bad trainer: %v", err)
	}
}

func TestSyncRepeatedPushFirstWinsAndAbortDrops(t *testing.T) {
	s := testShard(t, jobspec.ModeSync, 2, "sgd")
	before := params(s)
	s.Push(grad(s, 0, 0, 1, func(int, int) float32 { return 1 }))
	s.Push(grad(s, 0, 0, 1, func(int, int) float32 { return 100 })) // a repeat of micro-batch 0: dropped
	s.Push(grad(s, 1, 0, 1, func(int, int) float32 { return 1 }))
	after := params(s)
	if d := before[0] - after[0]; math.Abs(float64(d)-0.1) > 1e-6 {
		t.Fatalf("moved by %v, want 0.1 (the repeated push must not count)", d)
	}
	s.Push(grad(s, 0, 1, 1, func(int, int) float32 { return 100 }))
	s.AbortStep()
	if _, _, err := s.Push(grad(s, 1, 1, 1, func(int, int) float32 { return 1 })); err != nil || s.Step() != 1 {
		t.Fatalf("after abort one push must not complete the step: step %d err %v", s.Step(), err)
	}
}

func TestAsyncAppliesEachPushAtOnce(t *testing.T) {
	s := testShard(t, jobspec.ModeAsync, 2, "sgd")
	before := params(s)
	applied, step, err := s.Push(grad(s, 0, 0, 2, func(int, int) float32 { return 4 }))
	if err != nil || !applied || step != 1 {
		t.Fatalf("applied=%v step=%d err=%v", applied, step, err)
	}
	if d := before[3] - params(s)[3]; math.Abs(float64(d)-0.2) > 1e-6 {
		t.Fatalf("moved by %v, want 0.2 (mean of 2 records, sum 4, lr 0.1)", d)
	}
}

func TestGradientWriteBounds(t *testing.T) {
	s := testShard(t, jobspec.ModeSync, 1, "sgd")
	g := s.NewGradient(0, 0, 1)
	if err := g.Write(99, 0, []float32{1}); !errors.Is(err, ErrBadBlock) {
		t.Fatalf("unknown block: %v", err)
	}
	if err := g.Write(0, 3, []float32{1, 2}); !errors.Is(err, ErrBadGradient) {
		t.Fatalf("out of bounds: %v", err)
	}
}

func TestIncompletePushIsRefused(t *testing.T) {
	s := testShard(t, jobspec.ModeSync, 1, "sgd")
	g := s.NewGradient(0, 0, 1)
	if err := g.Write(s.Blocks()[0].ID, 0, []float32{1}); err != nil { // one float of a larger block
		t.Fatal(err)
	}
	if _, _, err := s.Push(g); !errors.Is(err, ErrBadGradient) {
		t.Fatalf("truncated push: %v, want ErrBadGradient", err)
	}
	if s.Step() != 0 {
		t.Fatal("a truncated push was applied")
	}
}
