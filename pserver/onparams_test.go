package pserver

import (
	"context"
	"maps"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/gtrain/gtrain/jobspec"
	"github.com/gtrain/gtrain/pserver/client"
)

// TestPushPullOnParamsWithTwoPservers: OnParams tells each parameter once,
// with the step its pservers answered, as soon as every pserver holding a
// block of it answered, and not before. Parameter 0 (5 floats, blocks of
// 4) is cut between the two pservers, parameter 1 is the second's alone:
// with the first pserver's answer held back, parameter 1 is told and 0 is
// not; once it answers, 0 is, and both hold step 1's values.
func TestPushPullOnParamsWithTwoPservers(t *testing.T) {
	blocks, err := client.Partition([]int{5, 3}, 2, 4)
	if err != nil {
		t.Fatal(err)
	}
	var addrs []string
	for srv := range 2 {
		own := slices.DeleteFunc(slices.Clone(blocks), func(b client.Block) bool { return b.Server != srv })
		s, err := NewShard(ShardConfig{Mode: jobspec.ModeSync, MicroBatches: 1, Blocks: own,
			Optimizer: OptimizerConfig{Kind: "sgd", LearningRate: 0.1}.WithDefaults()},
			func(b client.Block, dst []float32) {
				for i := range dst {
					dst[i] = float32(b.Param*10 + b.Offset + i)
				}
			})
		if err != nil {
			t.Fatal(err)
		}
		addrs = append(addrs, serveAt(t, NewServer(srv, s, nil, nil)))
	}
	c := clientOf(t, addrs, blocks)

	var mu sync.Mutex
	told := map[int]int64{}
	count := map[int]int{}
	written := func(j int, step int64) {
		mu.Lock()
		defer mu.Unlock()
		told[j], count[j] = step, count[j]+1
	}
	toldNow := func() map[int]int64 {
		mu.Lock()
		defer mu.Unlock()
		return maps.Clone(told)
	}
	release := make(chan struct{})
	hold := client.WaitBeforePull(func(ctx context.Context, held []int) error {
		if slices.Equal(held, []int{0}) { // the first pserver: parameter 0's first block alone
			<-release
		}
		return nil
	})
	grads, params := pushPullBuffers(1)
	done := make(chan error, 1)
	go func() {
		p, err := c.PushPull(context.Background(), 0, 0, 0, 1, false, grads, params, nil, hold, client.OnParams(written))
		if err == nil && !p.All {
			t.Errorf("pulled %+v, want all parameters", p)
		}
		done <- err
	}()
	deadline := time.Now().Add(5 * time.Second)
	for len(toldNow()) == 0 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	time.Sleep(50 * time.Millisecond) // anything more would be told by now
	if got := toldNow(); len(got) != 1 || got[1] != 1 {
		t.Fatalf("with the first pserver held back, told %v; want parameter 1 alone, of step 1", got)
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if got := toldNow(); len(got) != 2 || got[0] != 1 || got[1] != 1 || count[0] != 1 || count[1] != 1 {
		t.Fatalf("told %v (times %v); want parameters 0 and 1 once each, of step 1", got, count)
	}
	pulled := [][]float32{make([]float32, 5), make([]float32, 3)}
	if _, _, err := c.Pull(context.Background(), 1, 0, pulled); err != nil {
		t.Fatal(err)
	}
	for j := range pulled {
		if !slices.Equal(params[j], pulled[j]) {
			t.Fatalf("parameter %d: push-pulled %v, pulled %v", j, params[j], pulled[j])
		}
	}
}
