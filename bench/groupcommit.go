package bench

import (
	"context"
	"fmt"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"golang.org/x/sync/errgroup"
)

// GroupCommitPutPerSec is the ceiling for many trainers of a master that
// batches their changes: `way` goroutines each wait for one put to be
// durable, and one committer writes everything pending in one transaction,
// the master's group commit without the master (no queue, no gRPC, one key
// per request where the master writes a task's status and its meta). A plain
// 64-way put rate is no upper bound for a master that batches.
func GroupCommitPutPerSec(e *Etcd, n, way int) (float64, error) {
	gc := &groupCommit{cli: e.Cli, pending: map[string]chan error{}, wake: make(chan struct{}, 1)}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go gc.run(ctx)
	var g errgroup.Group
	per := n / way
	start := time.Now()
	for w := 0; w < way; w++ {
		g.Go(func() error {
			for i := 0; i < per; i++ {
				if err := gc.put(fmt.Sprintf("/bench/group/%d/%d", w, i%100)); err != nil {
					return err
				}
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return 0, err
	}
	return float64(per*way) / time.Since(start).Seconds(), nil
}

type groupCommit struct {
	cli     *clientv3.Client
	mu      sync.Mutex
	pending map[string]chan error
	wake    chan struct{}
}

func (g *groupCommit) put(key string) error {
	done := make(chan error, 1)
	g.mu.Lock()
	g.pending[key] = done
	g.mu.Unlock()
	select {
	case g.wake <- struct{}{}:
	default:
	}
	return <-done
}

// run commits whatever is pending, one transaction at a time.
func (g *groupCommit) run(ctx context.Context) {
	for {
		select {
		case <-g.wake:
		case <-ctx.Done():
			return
		}
		g.mu.Lock()
		batch := g.pending
		g.pending = map[string]chan error{}
		g.mu.Unlock()
		if len(batch) == 0 {
			continue
		}
		ops := make([]clientv3.Op, 0, len(batch))
		for k := range batch {
			ops = append(ops, clientv3.OpPut(k, "v"))
		}
		_, err := g.cli.Txn(ctx).Then(ops...).Commit()
		for _, done := range batch {
			done <- err
		}
	}
}
