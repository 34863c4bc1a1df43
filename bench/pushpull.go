package bench

import (
	"context"
	"fmt"
	"net"
	"path/filepath"
	"time"

	"github.com/gtrain/gtrain/api"
	"github.com/gtrain/gtrain/checkpoint"
	"github.com/gtrain/gtrain/internal/clock"
	"github.com/gtrain/gtrain/internal/jobauth"
	"github.com/gtrain/gtrain/jobspec"
	"github.com/gtrain/gtrain/pserver"
	"github.com/gtrain/gtrain/pserver/client"
	"github.com/gtrain/gtrain/pserver/wire"
	"golang.org/x/sync/errgroup"
	"google.golang.org/grpc"
)

// rig is real pserver shards served over gRPC on loopback in sync mode, with
// trainers that pull the whole model and push a whole gradient per step.
type rig struct {
	clients []*client.Client
	params  [][][]float32
	stop    []func()
	floats  int
	next    int64
	pauses  chan time.Duration // each checkpoint's pause (pserver.Shard.Release), when checkpointing
}

// serveShard serves shard as pserver index over the real gRPC server on
// loopback; stop ends it.
func serveShard(index int, shard *pserver.Shard) (addr string, stop func(), err error) {
	t, stop, err := serveShardOn(index, shard, "")
	return t.Addr, stop, err
}

// serveShardOn is serveShard, also on a unix socket in socketDir (as a
// pserver process serves clients of its host) unless socketDir is "".
func serveShardOn(index int, shard *pserver.Shard, socketDir string) (client.Target, func(), error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return client.Target{}, nil, err
	}
	t := client.Target{Addr: l.Addr().String()}
	srv := grpc.NewServer(wire.ServerOptions()...)
	api.RegisterPServerServer(srv, pserver.NewServer(index, shard, nil, clock.System{}))
	go func() { _ = srv.Serve(l) }()
	if socketDir != "" {
		t.Socket = filepath.Join(socketDir, fmt.Sprintf("pserver-%d.sock", index))
		u, err := net.Listen("unix", t.Socket)
		if err != nil {
			srv.Stop()
			return client.Target{}, nil, err
		}
		go func() { _ = srv.Serve(wire.LocalListener(u)) }()
	}
	return t, srv.Stop, nil
}

// newRig starts the shards; with ckptDir set, each shard's snapshots are
// written out by a checkpointer as the pserver process does.
func newRig(floats, pservers, trainers int, ckptDir string) (*rig, error) {
	return newRigOf([]int{floats}, pservers, trainers, ckptDir)
}

// newRigOf is newRig for a model of several parameters of these sizes.
func newRigOf(sizes []int, pservers, trainers int, ckptDir string) (*rig, error) {
	return newRigVia(sizes, pservers, trainers, ckptDir, "")
}

// newRigVia is newRigOf whose trainers reach the pservers through unix
// sockets in socketDir, unless it is "" (TCP on loopback).
func newRigVia(sizes []int, pservers, trainers int, ckptDir, socketDir string) (*rig, error) {
	blocks, err := client.Partition(sizes, pservers, client.MaxBlockFloats)
	if err != nil {
		return nil, err
	}
	floats := 0
	for _, n := range sizes {
		floats += n
	}
	r := &rig{floats: floats, pauses: make(chan time.Duration, 1024)}
	var targets []client.Target
	for i := 0; i < pservers; i++ {
		shard, err := pserver.NewShard(pserver.ShardConfig{Mode: jobspec.ModeSync, MicroBatches: trainers, Blocks: client.BlocksOf(blocks, i),
			Optimizer: pserver.OptimizerConfig{Kind: "sgd", LearningRate: 1e-6}.WithDefaults()},
			func(_ client.Block, dst []float32) { fill(dst) })
		if err != nil {
			return nil, err
		}
		target, stop, err := serveShardOn(i, shard, socketDir)
		if err != nil {
			return nil, err
		}
		r.stop = append(r.stop, stop)
		targets = append(targets, target)
		if ckptDir != "" {
			store, err := checkpoint.NewStore(checkpoint.Config{Identity: checkpoint.Identity{Job: "bench", Rev: 1}, Dir: ckptDir, Keep: 2, Index: i}, checkpoint.NewMemRecorder(), nil)
			if err != nil {
				return nil, err
			}
			ctx, cancel := context.WithCancel(context.Background())
			r.stop = append(r.stop, cancel)
			go func() {
				shard.PrepareCopies()
				for {
					select {
					case snap := <-shard.Snapshots():
						_, _ = store.Save(ctx, checkpoint.Snapshot{Index: i, Step: snap.Step, Sections: snap.Sections})
						select {
						case r.pauses <- shard.Release(snap):
						default:
						}
					case <-ctx.Done():
						return
					}
				}
			}()
		}
	}
	for t := 0; t < trainers; t++ {
		c, err := client.NewClientTo(targets, blocks, jobauth.Dial{}) // plaintext on loopback
		if err != nil {
			return nil, err
		}
		r.clients = append(r.clients, c)
		r.stop = append(r.stop, c.Close)
		params := make([][]float32, len(sizes))
		for j, n := range sizes {
			params[j] = make([]float32, n)
		}
		r.params = append(r.params, params)
	}
	return r, r.step(false) // warm up connections and buffers
}

func (r *rig) close() {
	for _, f := range r.stop {
		f()
	}
}

// step runs one sync step: every trainer pulls, then pushes.
func (r *rig) step(checkpoint bool) error {
	s := r.next
	g, ctx := errgroup.WithContext(context.Background())
	for t := range r.clients {
		g.Go(func() error {
			if _, _, err := r.clients[t].Pull(ctx, s, 0, r.params[t]); err != nil {
				return err
			}
			return r.clients[t].Push(ctx, t, s, 0, 1, checkpoint, r.params[t])
		})
	}
	if err := g.Wait(); err != nil {
		return fmt.Errorf("step %d: %w", s, err)
	}
	r.next++
	return nil
}

// PushPullMBps returns the MB/s moved (pull + push, all trainers) through the
// real pservers.
func PushPullMBps(floats, pservers, trainers, steps int) (float64, error) {
	r, err := newRig(floats, pservers, trainers, "")
	if err != nil {
		return 0, err
	}
	defer r.close()
	start := time.Now()
	for i := 0; i < steps; i++ {
		if err := r.step(false); err != nil {
			return 0, err
		}
	}
	moved := float64(steps) * float64(trainers) * 2 * float64(floats) * 4
	return moved / time.Since(start).Seconds() / 1e6, nil
}

// CheckpointThroughput returns steps/s of the same training loop without
// checkpoints (at least the rate with them: a true ceiling) and with a
// checkpoint every `every`, each run for `run`, the checkpoints written to
// dir by the shards' checkpointers.
func CheckpointThroughput(floats int, run, every time.Duration, dir string) (without, with float64, err error) {
	measure := func(ckpt bool) (float64, error) {
		d := ""
		if ckpt {
			d = dir
		}
		r, err := newRig(floats, 2, 2, d)
		if err != nil {
			return 0, err
		}
		defer r.close()
		// The first checkpoint at once, then every `every`: run/every checkpoints
		// in the run, the steady-state rate.
		start, steps := time.Now(), 0
		last := start.Add(-every)
		for time.Since(start) < run {
			flag := ckpt && time.Since(last) >= every
			if flag {
				last = time.Now()
			}
			if err := r.step(flag); err != nil {
				return 0, err
			}
			steps++
		}
		return float64(steps) / time.Since(start).Seconds(), nil
	}
	// Alternate the two runs twice and keep each one's best: the machine's
	// noise only slows a run down, and it drifts over a minute.
	for i := 0; i < 2; i++ {
		w, err := measure(false)
		if err != nil {
			return 0, 0, err
		}
		c, err := measure(true)
		if err != nil {
			return 0, 0, err
		}
		without, with = max(without, w), max(with, c)
	}
	// The loop without checkpoints bounds the loop with them; when noise
	// made a checkpointing run the faster one, that run is the best this
	// loop was seen to do, and so the bound.
	return max(without, with), with, nil
}
