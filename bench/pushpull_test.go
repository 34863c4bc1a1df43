package bench

import (
	"context"
	"fmt"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sync/errgroup"
)

// mlpSizes are the parameters of MLP 784-1024-1024-10 (trainer_mlp).
var mlpSizes = []int{784 * 1024, 1024, 1024 * 1024, 1024, 1024 * 10, 10}

// BenchmarkPushPullMLP is sync trainers' PushPull of the MLP's gradient
// and next parameters through 2 real pservers over gRPC on loopback, all
// in this process (1 trainer, and 2 that each push a micro-batch of the
// step). cpu-ms/step (user+system, both sides) is what moving the
// parameters costs; unlike ns/op it holds on a loaded machine.
func BenchmarkPushPullMLP(b *testing.B) {
	for _, trainers := range []int{1, 2} {
		b.Run(fmt.Sprintf("trainers=%d", trainers), func(b *testing.B) { benchPushPull(b, trainers, "") })
	}
	// The same through the unix sockets a pserver serves its host's
	// clients on (pserver.process.listenLocal).
	for _, trainers := range []int{1, 2} {
		b.Run(fmt.Sprintf("socket/trainers=%d", trainers), func(b *testing.B) { benchPushPull(b, trainers, b.TempDir()) })
	}
}

func benchPushPull(b *testing.B, trainers int, socketDir string) {
	b.ReportAllocs()
	r, err := newRigVia(mlpSizes, 2, trainers, "", socketDir)
	if err != nil {
		b.Fatal(err)
	}
	defer r.close()
	step := func() {
		s := r.next
		g, ctx := errgroup.WithContext(context.Background())
		for t := range r.clients {
			g.Go(func() error {
				_, err := r.clients[t].PushPull(ctx, t, s, 0, 1, false, r.params[t], r.params[t], nil)
				return err
			})
		}
		if err := g.Wait(); err != nil {
			b.Fatal(err)
		}
		r.next++
	}
	for i := 0; i < 5; i++ {
		step() // warm the pools and windows
	}
	cpu0 := cpuTime()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		step()
	}
	b.StopTimer()
	b.ReportMetric(float64(cpuTime()-cpu0)/float64(time.Millisecond)/float64(b.N), "cpu-ms/step")
}

// cpuTime is this process's user+system time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
