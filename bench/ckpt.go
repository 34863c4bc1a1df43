package bench

import (
	"time"

	"github.com/gtrain/gtrain/jobspec"
	"github.com/gtrain/gtrain/pserver"
	"github.com/gtrain/gtrain/pserver/client"
)

// CheckpointPause returns the milliseconds a pserver holding floats
// parameters (sgd: no optimizer slots) stops serving to snapshot its shard,
// and the milliseconds a plain copy of that many bytes takes (the ceiling).
func CheckpointPause(floats, iters int) (pauseMs, copyMs float64, err error) {
	blocks, err := client.Partition([]int{floats}, 1, client.MaxBlockFloats)
	if err != nil {
		return 0, 0, err
	}
	shard, err := pserver.NewShard(pserver.ShardConfig{Mode: jobspec.ModeSync, MicroBatches: 1, Blocks: blocks,
		Optimizer: pserver.OptimizerConfig{Kind: "sgd", LearningRate: 0.1}.WithDefaults()},
		func(_ client.Block, dst []float32) { fill(dst) }) // real data: untouched pages would all map the zero page
	if err != nil {
		return 0, 0, err
	}
	best := time.Duration(1 << 62)
	for i := 0; i < iters; i++ {
		start := time.Now()
		shard.SnapshotNow() // the whole pause: the copy under the shard's lock
		best = min(best, time.Since(start))
		shard.Release(<-shard.Snapshots())
	}
	src, dst := make([]float32, floats), make([]float32, floats)
	fill(src)
	copy(dst, src)
	bestCopy := time.Duration(1 << 62)
	for i := 0; i < iters; i++ {
		start := time.Now()
		copy(dst, src)
		bestCopy = min(bestCopy, time.Since(start))
	}
	return float64(best) / 1e6, float64(bestCopy) / 1e6, nil
}

func fill(v []float32) {
	for i := range v {
		v[i] = float32(i%1000) * 1e-3
	}
}
