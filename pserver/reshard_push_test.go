package pserver

import (
	"context"
	"testing"

	"github.com/gtrain/gtrain/jobspec"
	"github.com/gtrain/gtrain/pserver/client"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// The race behind TestRecommender's chaos flake, made deterministic: a
// re-shard ends each pserver's generation in place, and the next one serves
// at the same address (its unix socket's path is the index's), so a trainer
// whose client still cuts the parameters over the old layout (2 pservers)
// reaches the new cut (3) at the re-shard's step, in a rollback epoch the
// shard does not refuse yet (a generation starts in epoch 0, before the
// master's rollback). The pservers refuse the push as malformed
// (InvalidArgument) before any step check: what the trainer must take for
// "the layout moved" (trainer.layoutMoved), not for a fault of its own. The
// same push cut over the new layout is taken.
func TestPushCutOverTheOldLayoutReachesTheNewCut(t *testing.T) {
	sizes := []int{5, 3}
	old, err := client.Partition(sizes, 2, 4)
	if err != nil {
		t.Fatal(err)
	}
	cut, err := client.Partition(sizes, 3, 4)
	if err != nil {
		t.Fatal(err)
	}
	var addrs []string
	for i := range 3 {
		s, err := NewShard(ShardConfig{Mode: jobspec.ModeSync, MicroBatches: 1, Blocks: client.BlocksOf(cut, i),
			Optimizer: OptimizerConfig{Kind: "sgd", LearningRate: 0.1}.WithDefaults()}, nil)
		if err != nil {
			t.Fatal(err)
		}
		addrs = append(addrs, serveAt(t, NewServer(i, s, nil, nil)))
	}
	grads := [][]float32{make([]float32, 5), make([]float32, 3)}
	const step, epoch = 0, 3
	err = clientOf(t, addrs[:2], old).Push(context.Background(), 0, step, epoch, 1, false, grads)
	if status.Code(err) != codes.InvalidArgument {
		t.Fatalf("a push cut over 2 pservers reaching the cut of 3: %v; want InvalidArgument (a block it does not hold, or out of its bounds)", err)
	}
	t.Logf("refused as the flake's trainer saw it: %v", err)
	if err := clientOf(t, addrs, cut).Push(context.Background(), 0, step, epoch, 1, false, grads); err != nil {
		t.Fatalf("the same push cut over the 3 pservers: %v", err)
	}
}
