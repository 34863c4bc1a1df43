package pserver

import (
	"testing"

	"github.com/gtrain/gtrain/jobspec"
	"github.com/gtrain/gtrain/pserver/client"
)

// A frozen parameter (init_from.freeze) keeps its values through steps; the
// others move as ever.
func TestFrozenParamIsNotUpdated(t *testing.T) {
	blocks, err := client.Partition([]int{5, 3}, 1, 4)
	if err != nil {
		t.Fatal(err)
	}
	s, err := NewShard(ShardConfig{Mode: jobspec.ModeSync, MicroBatches: 1, Blocks: blocks, Frozen: map[int]bool{0: true},
		Optimizer: OptimizerConfig{Kind: "sgd", LearningRate: 0.1}.WithDefaults()},
		func(b client.Block, dst []float32) {
			for i := range dst {
				dst[i] = 1
			}
		})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.Push(grad(s, 0, 0, 1, func(int, int) float32 { return 1 })); err != nil {
		t.Fatal(err)
	}
	got := params(s) // param 0 (5 floats) then param 1 (3 floats)
	for i, v := range got {
		frozen := i < 5
		if frozen && v != 1 || !frozen && v == 1 {
			t.Errorf("float %d = %v after a step (frozen: %v)", i, v, frozen)
		}
	}
}
