package pserver

import (
	"context"
	"sync"
	"testing"

	"github.com/gtrain/gtrain/jobspec"
	"github.com/gtrain/gtrain/pserver/client"
	"github.com/gtrain/gtrain/pserver/wire"
)

// TestPullSeesOneStepWhileAsyncPushesApply: a pull sends the parameters
// from the shard's memory (lent to gRPC, not copied), so the next push may
// apply only once gRPC no longer reads them. An async shard applies every
// push at once; with pushes of a constant gradient arriving all the time,
// every pull must still bring values of one step: all equal.
func TestPullSeesOneStepWhileAsyncPushesApply(t *testing.T) {
	n := 3*wire.ChunkFloats + 100 // several chunks, the last one short
	blocks, err := client.Partition([]int{n}, 1, n)
	if err != nil {
		t.Fatal(err)
	}
	s, err := NewShard(ShardConfig{Mode: jobspec.ModeAsync, MicroBatches: 1, Blocks: blocks,
		Optimizer: OptimizerConfig{Kind: "sgd", LearningRate: 1}.WithDefaults()},
		func(_ client.Block, dst []float32) { clear(dst) })
	if err != nil {
		t.Fatal(err)
	}
	c := serveShard(t, s, nil)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // each push takes 1 off every value: small integers, exact
		defer wg.Done()
		ones := [][]float32{make([]float32, n)}
		for i := range ones[0] {
			ones[0][i] = 1
		}
		for ctx.Err() == nil {
			_ = c.Push(ctx, 0, 0, 0, 1, false, ones)
		}
	}()
	defer wg.Wait()
	defer cancel()
	params := [][]float32{make([]float32, n)}
	for pull := 0; pull < 40; pull++ {
		if _, _, err := c.Pull(ctx, 0, 0, params); err != nil {
			t.Fatal(err)
		}
		for i, v := range params[0] {
			if v != params[0][0] {
				t.Fatalf("pull %d: value %d is %v, value 0 %v: the pull mixed steps", pull, i, v, params[0][0])
			}
		}
	}
	if params[0][0] == 0 {
		t.Fatal("no push was applied while pulling: the test tested nothing")
	}
}
