package pserver

import "testing"

// benchFloats is 16M float32 = 64 MiB per vector, far larger than any cache,
// so the benchmarks measure the memory-bound steady state.
const benchFloats = 16 << 20

// SGD reads p and g and writes p: 12 bytes per parameter.
func BenchmarkOptimizerSGD(b *testing.B) {
	benchmarkOptimizer(b, OptimizerConfig{Kind: OptimizerSGD, LearningRate: 0.01}, 12)
}

// Adam reads p, g, m, v and writes p, m, v: 28 bytes per parameter.
func BenchmarkOptimizerAdam(b *testing.B) {
	benchmarkOptimizer(b, OptimizerConfig{Kind: OptimizerAdam, LearningRate: 0.01}.WithDefaults(), 28)
}

func benchmarkOptimizer(b *testing.B, cfg OptimizerConfig, bytesPerParam int64) {
	opt, err := NewOptimizer(cfg)
	if err != nil {
		b.Fatal(err)
	}
	p := make([]float32, benchFloats)
	g := make([]float32, benchFloats)
	for i := range g {
		g[i] = float32(i%7) * 1e-3
	}
	slots := newSlots(opt.Slots(), benchFloats)
	opt.Update(p, g, slots, 1) // fault pages in outside the timed loop
	b.SetBytes(bytesPerParam * benchFloats)
	step := int64(1)
	for b.Loop() {
		step++
		opt.Update(p, g, slots, step)
	}
}

// BenchmarkMemCopy64MiB is the ceiling for the optimizer benchmarks: the
// bytes a plain copy moves (read + write) per second.
func BenchmarkMemCopy64MiB(b *testing.B) {
	const size = 64 << 20
	src := make([]byte, size)
	dst := make([]byte, size)
	for i := range src {
		src[i] = byte(i)
	}
	copy(dst, src)
	b.SetBytes(2 * size)
	for b.Loop() {
		copy(dst, src)
	}
}
