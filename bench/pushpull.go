package bench

import (
	"context"
	"fmt"
	"net"
	"time"

	"github.com/gtrain/gtrain/api"
	"github.com/gtrain/gtrain/pserver"
	"golang.org/x/sync/errgroup"
	"google.golang.org/grpc"
)

// PushPullMBps runs real pserver shards over gRPC on loopback in sync mode and
// has every trainer pull the whole model and push a whole gradient per step;
// it returns the MB/s moved (pull + push, all trainers).
func PushPullMBps(floats, pservers, trainers, steps int) (float64, error) {
	blocks, err := pserver.Partition([]int{floats}, pservers, pserver.MaxBlockFloats)
	if err != nil {
		return 0, err
	}
	var addrs []string
	for i := 0; i < pservers; i++ {
		shard, err := pserver.NewShard(pserver.ShardConfig{Mode: pserver.Sync, Trainers: trainers, Blocks: pserver.BlocksOf(blocks, i),
			Optimizer: pserver.OptimizerConfig{Kind: "sgd", LearningRate: 1e-6}.WithDefaults()}, nil)
		if err != nil {
			return 0, err
		}
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return 0, err
		}
		srv := grpc.NewServer(pserver.ServerOptions()...)
		api.RegisterPServerServer(srv, pserver.NewServer(i, shard, nil))
		go srv.Serve(l)
		defer srv.Stop()
		addrs = append(addrs, l.Addr().String())
	}
	clients := make([]*pserver.Client, trainers)
	params := make([][][]float32, trainers)
	for t := range clients {
		if clients[t], err = pserver.NewClient(addrs, blocks); err != nil {
			return 0, err
		}
		defer clients[t].Close()
		params[t] = [][]float32{make([]float32, floats)}
	}
	ctx := context.Background()
	step := func(s int64) error {
		g, ctx := errgroup.WithContext(ctx)
		for t := range clients {
			g.Go(func() error {
				if _, _, err := clients[t].Pull(ctx, s, 0, params[t]); err != nil {
					return err
				}
				return clients[t].Push(ctx, t, s, 0, 1, false, params[t])
			})
		}
		return g.Wait()
	}
	if err := step(0); err != nil { // warm up connections and buffers
		return 0, fmt.Errorf("push/pull: %w", err)
	}
	start := time.Now()
	for s := int64(1); s <= int64(steps); s++ {
		if err := step(s); err != nil {
			return 0, fmt.Errorf("push/pull step %d: %w", s, err)
		}
	}
	moved := float64(steps) * float64(trainers) * 2 * float64(floats) * 4
	return moved / time.Since(start).Seconds() / 1e6, nil
}
