package bench

import (
	"context"
	"syscall"
	"testing"
	"time"
)

// mlpSizes are the parameters of MLP 784-1024-1024-10 (trainer_mlp).
var mlpSizes = []int{784 * 1024, 1024, 1024 * 1024, 1024, 1024 * 10, 10}

// BenchmarkPushPullMLP is one sync trainer's PushPull of the MLP's
// gradient and next parameters through 2 real pservers over gRPC on
// loopback, all in this process. cpu-ms/step (user+system, both sides) is
// what moving the parameters costs; unlike ns/op it holds on a loaded
// machine.
func BenchmarkPushPullMLP(b *testing.B) {
	b.ReportAllocs()
	r, err := newRigOf(mlpSizes, 2, 1, "")
	if err != nil {
		b.Fatal(err)
	}
	defer r.close()
	ctx := context.Background()
	step := func() {
		s := r.next
		if _, err := r.clients[0].PushPull(ctx, 0, s, 0, 1, false, r.params[0], r.params[0], nil); err != nil {
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
