package pserver

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"path/filepath"
	"testing"

	"github.com/gtrain/gtrain/api"
	"github.com/gtrain/gtrain/internal/jobauth"
	"github.com/gtrain/gtrain/jobspec"
	"github.com/gtrain/gtrain/pserver/client"
	"github.com/gtrain/gtrain/pserver/region"
	"github.com/gtrain/gtrain/pserver/wire"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// regionRig is pservers over the same blocks twice: one set reached over
// TCP, the other over unix sockets with regions, as a pserver process
// serves the trainers of its host.
type regionRig struct {
	blocks     []client.Block
	tcp, local *client.Client
	registries []*region.Registry
}

func newRegionRig(t *testing.T, sizes []int, pservers, maxBlock int) *regionRig {
	t.Helper()
	blocks, err := client.Partition(sizes, pservers, maxBlock)
	if err != nil {
		t.Fatal(err)
	}
	r := &regionRig{blocks: blocks}
	dir := t.TempDir()
	var addrs []string
	var targets []client.Target
	for i := range pservers {
		shard := func() *Shard {
			s, err := NewShard(ShardConfig{Mode: jobspec.ModeSync, MicroBatches: 1, Blocks: client.BlocksOf(blocks, i),
				Optimizer: OptimizerConfig{Kind: "sgd", LearningRate: 0.1}.WithDefaults()},
				func(b client.Block, dst []float32) {
					for k := range dst {
						dst[k] = float32(b.ID) + float32(k)/1000
					}
				})
			if err != nil {
				t.Fatal(err)
			}
			return s
		}
		addrs = append(addrs, serveAt(t, NewServer(i, shard(), nil, nil)))
		s := shard()
		reg := region.NewRegistry(client.ServerSizes(blocks, pservers)[i],
			slog.New(slog.NewTextHandler(io.Discard, nil)))
		r.registries = append(r.registries, reg)
		target := client.Target{Addr: serveAt(t, NewServer(i, s, nil, nil).WithRegions(reg)),
			Socket: filepath.Join(dir, fmt.Sprintf("pserver-%d.sock", i))}
		serveUnix(t, target.Socket, NewServer(i, s, nil, nil).WithRegions(reg))
		lis, err := net.Listen("unix", region.SocketPath(target.Socket))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { lis.Close() })
		go reg.Serve(lis)
		targets = append(targets, target)
	}
	r.tcp = clientOf(t, addrs, blocks)
	var err2 error
	if r.local, err2 = client.NewClientTo(targets, blocks, jobauth.Dial{}); err2 != nil {
		t.Fatal(err2)
	}
	t.Cleanup(r.local.Close)
	return r
}

func serveUnix(t *testing.T, path string, server *Server) {
	t.Helper()
	lis, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer(wire.ServerOptions()...)
	api.RegisterPServerServer(srv, server)
	go func() { _ = srv.Serve(wire.LocalListener(lis)) }()
	t.Cleanup(srv.Stop)
}

// TestPushPullThroughARegion: pushes and pulls through shared-memory
// regions give the parameters, bit for bit, that the same pushes over the
// socket give, step after step; the regions are attached (not a silent
// fall back to the socket); and a pserver that lost a trainer's region
// (restarted) answers Unavailable, after which the trainer's next push
// attaches another and goes on.
func TestPushPullThroughARegion(t *testing.T) {
	sizes := []int{700, 300, 41}
	r := newRegionRig(t, sizes, 2, 128)
	rng := rand.New(rand.NewPCG(1, 2))
	newSet := func() [][]float32 {
		out := make([][]float32, len(sizes))
		for j, n := range sizes {
			out[j] = make([]float32, n)
		}
		return out
	}
	grads, viaTCP, viaRegion := newSet(), newSet(), newSet()
	ctx := context.Background()
	for step := range int64(6) {
		for _, g := range grads {
			for k := range g {
				g[k] = float32(rng.NormFloat64())
			}
		}
		if step == 3 {
			for _, reg := range r.registries {
				reg.Drop() // as a restarted pserver knows no region
			}
		}
		a, err := r.tcp.PushPull(ctx, 0, step, 0, 4, false, grads, viaTCP, nil)
		if err != nil {
			t.Fatal(err)
		}
		// A push that names a region the pserver dropped is refused as
		// Unavailable (the trainer retries, as with a pserver gone); the
		// trainer also sees the attachment end, and attaches another.
		var b client.Pulled
		for try := 0; ; try++ {
			b, err = r.local.PushPull(ctx, 0, step, 0, 4, false, grads, viaRegion, nil)
			if err == nil || status.Code(err) != codes.Unavailable || try == len(sizes) {
				break
			}
		}
		if err != nil {
			t.Fatalf("step %d through regions: %v", step, err)
		}
		if !a.All || !b.All || a.Lowest != step+1 || b.Lowest != step+1 {
			t.Fatalf("step %d: pulled %+v over TCP, %+v through regions; want every pserver at step %d", step, a, b, step+1)
		}
		for j := range sizes {
			for k := range viaTCP[j] {
				if viaTCP[j][k] != viaRegion[j][k] {
					t.Fatalf("step %d: parameter %d[%d] is %v through regions, %v over TCP", step, j, k, viaRegion[j][k], viaTCP[j][k])
				}
			}
		}
	}
	for i, reg := range r.registries {
		if reg.Len() != 1 {
			t.Errorf("pserver %d holds %d regions; want 1 (the one attached after the loss)", i, reg.Len())
		}
	}
}

// TestWithRegionsOfAnotherSize: a registry made for a shard of another size
// is refused where the server is made, not at a trainer's stream.
func TestWithRegionsOfAnotherSize(t *testing.T) {
	blocks, err := client.Partition([]int{100}, 1, 64)
	if err != nil {
		t.Fatal(err)
	}
	s, err := NewShard(ShardConfig{Mode: jobspec.ModeSync, MicroBatches: 1, Blocks: blocks,
		Optimizer: OptimizerConfig{Kind: "sgd", LearningRate: 0.1}.WithDefaults()},
		func(client.Block, []float32) {})
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	NewServer(0, s, nil, nil).WithRegions(region.NewRegistry(100, log)) // its size: no panic
	defer func() {
		if recover() == nil {
			t.Fatal("a registry of 101 floats for a shard of 100: no panic")
		}
	}()
	NewServer(0, s, nil, nil).WithRegions(region.NewRegistry(101, log))
}
