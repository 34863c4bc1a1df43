package model

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/blas"
	"math/rand/v2"
	"runtime"
	"testing"
)

// widenParams copies float32 parameters into float64 ones.
func widenParams(params [][]float32) [][]float64 {
	out := make([][]float64, len(params))
	for j, p := range params {
		out[j] = make([]float64, len(p))
		for k, v := range p {
			out[j][k] = float64(v)
		}
	}
	return out
}

// refLoss is the loss sum of the model of spec on b, computed naively in
// float64: the reference the float32 kernels are checked against.
func refLoss(spec Spec, params [][]float64, b Batch) float64 {
	var total float64
	for r := range b.N {
		a := make([]float64, b.Inputs)
		for i := range a {
			a[i] = float64(b.X[r*b.Inputs+i])
		}
		total += refRecordLoss(spec, params, a, float64(b.Y[r]))
	}
	return total
}

// refRecordLoss is the loss of one record of inputs a and label y.
func refRecordLoss(spec Spec, params [][]float64, a []float64, y float64) float64 {
	sizes := spec.layerSizes()
	for l := range len(sizes) - 1 {
		w, bias := params[2*l], params[2*l+1]
		z := make([]float64, sizes[l+1])
		for o := range z {
			z[o] = bias[o]
			for i, v := range a {
				z[o] += v * w[i*sizes[l+1]+o]
			}
		}
		if l < len(sizes)-2 {
			for o := range z {
				z[o] = max(z[o], 0)
			}
		}
		a = z
	}
	return refHead(spec, a, y)
}

func refHead(spec Spec, z []float64, y float64) float64 {
	if !spec.isClassifier() {
		return (z[0] - y) * (z[0] - y)
	}
	top := math.Inf(-1)
	for _, v := range z {
		top = max(top, v)
	}
	var sum float64
	for _, v := range z {
		sum += math.Exp(v - top)
	}
	return top + math.Log(sum) - z[int(y)]
}

// wideSpecs have layers wider than a tile and batches taller than one, so
// that forward and delta products are cut into several tiles in both
// directions, and weight gradients into several bands.
var wideSpecs = []struct {
	spec Spec
	rows int
}{
	{Spec{Kind: KindMLP, Inputs: 300, Outputs: 10, Hidden: []int{600, 257}}, 300},
	{Spec{Kind: KindSoftmax, Inputs: 784, Outputs: 10}, 513},
	{Spec{Kind: KindLinear, Inputs: 13, Outputs: 1}, 20},
}

// TestThreadsGiveBitIdenticalGradients: a micro-batch's gradient, loss and
// evaluation are the same bits on 1, 2, 3 or 8 threads (docs/reference.md#job-spec:
// the same model whatever resources.trainer.cpu).
func TestThreadsGiveBitIdenticalGradients(t *testing.T) {
	for i, ws := range wideSpecs {
		rng := rand.New(rand.NewPCG(uint64(i), 5))
		one := mustNewWith(t, ws.spec, Options{Threads: 1})
		params := randomParams(one, rng)
		b := randomBatch(ws.spec, ws.rows, rng)
		want := zeroParams(one)
		wantLoss := one.Gradient(params, b, want)
		wantEval, wantCorrect := one.Evaluate(params, b)
		for _, n := range []int{2, 3, 8} {
			m := mustNewWith(t, ws.spec, Options{Threads: n})
			got := zeroParams(m)
			loss := m.Gradient(params, b, got)
			eval, correct := m.Evaluate(params, b)
			if loss != wantLoss || eval != wantEval || correct != wantCorrect {
				t.Errorf("%s, %d threads: loss %v eval %v/%d; 1 thread %v %v/%d", ws.spec.Kind, n, loss, eval, correct, wantLoss, wantEval, wantCorrect)
			}
			if j, k := firstBitDifference(got, want); j >= 0 {
				t.Errorf("%s, %d threads: grad %d[%d] = %v; 1 thread %v", ws.spec.Kind, n, j, k, got[j][k], want[j][k])
			}
		}
	}
}

func firstBitDifference(a, b [][]float32) (int, int) {
	for j := range a {
		for k := range a[j] {
			if math.Float32bits(a[j][k]) != math.Float32bits(b[j][k]) {
				return j, k
			}
		}
	}
	return -1, -1
}

// TestPureGoMatchesFastKernels: the kernels of a build without OpenBLAS
// (gonum's pure Go) and this build's agree within a stated tolerance: every
// gradient value within 1e-4 of its tensor's largest magnitude, and the loss
// within 1e-5 relative. They sum in other orders, so bits may differ; both
// are also checked against a float64 reference loss.
func TestPureGoMatchesFastKernels(t *testing.T) {
	t.Logf("kernels of this build: %s", Kernels())
	for i, ws := range wideSpecs {
		rng := rand.New(rand.NewPCG(uint64(i), 6))
		fast := mustNewWith(t, ws.spec, Options{Threads: 2})
		slow := mustNewWith(t, ws.spec, Options{Threads: 2, impl: pureGoGemm})
		params := randomParams(fast, rng)
		for _, p := range params {
			for k := range p {
				p[k] *= 0.1 // keep the deep layers' values in a useful range
			}
		}
		b := randomBatch(ws.spec, ws.rows, rng)
		gFast, gSlow := zeroParams(fast), zeroParams(slow)
		lFast, lSlow := fast.Gradient(params, b, gFast), slow.Gradient(params, b, gSlow)
		ref := refLoss(ws.spec, widenParams(params), b)
		for name, l := range map[string]float64{"fast": lFast, "pure-Go": lSlow} {
			if math.Abs(l-ref) > 1e-5*math.Abs(ref) {
				t.Errorf("%s: %s loss %v; float64 reference %v", ws.spec.Kind, name, l, ref)
			}
		}
		for j := range gFast {
			largest := 0.0
			for _, v := range gSlow[j] {
				largest = max(largest, math.Abs(float64(v)))
			}
			for k := range gFast[j] {
				if d := math.Abs(float64(gFast[j][k] - gSlow[j][k])); d > 1e-4*largest {
					t.Fatalf("%s: grad %d[%d]: fast %v, pure-Go %v (largest %v)", ws.spec.Kind, j, k, gFast[j][k], gSlow[j][k], largest)
				}
			}
		}
	}
}

// TestGradientDoesNotAllocate: a trainer's step reuses its buffers. The
// kernel is a plain loop here, so that only gtrain's code is counted (gonum's
// pure-Go sgemm allocates for its own goroutines; OpenBLAS's cgo calls do not).
func TestGradientDoesNotAllocate(t *testing.T) {
	spec := Spec{Kind: KindMLP, Inputs: 50, Outputs: 10, Hidden: []int{40}}
	m := mustNewWith(t, spec, Options{Threads: 1, impl: loopGemm{}})
	rng := rand.New(rand.NewPCG(1, 1))
	params, b, grads := randomParams(m, rng), randomBatch(spec, 32, rng), zeroParams(m)
	if allocs := testing.AllocsPerRun(20, func() { m.Gradient(params, b, grads) }); allocs > 0 {
		t.Errorf("Gradient allocates %v times per call; want 0", allocs)
	}
}

func mustNewWith(t testing.TB, s Spec, o Options) Model {
	t.Helper()
	m, err := NewWith(s, o)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// BenchmarkMLPGradient is trainer_mlp's micro-batch: MLP 784-1024-1024-10
// over 256 records, on -cpu threads (-cpu 1 for one), with one P more than
// threads, as a trainer runs (roleruntime.LimitComputeProcs). With as many
// Ps as threads, 2 threads took 18.5-22 ms here against 14.6-16.3 with 3
// Ps (2-core Zen 4 VM, 2026-11-29): a goroutine back from its OpenBLAS
// call waits for a P the runtime has not yet taken back from the other.
// With -count above 1 and a -cpu list, Go 1.26's testing ran the first
// b.Loop measurement at the process's GOMAXPROCS, not the list's first
// value (its line read 2 threads' time under -cpu 1): read it with
// -count 1, or drop that first line.
func BenchmarkMLPGradient(b *testing.B) {
	threads := runtime.GOMAXPROCS(0)
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(threads + 1))
	spec := Spec{Kind: KindMLP, Inputs: 784, Outputs: 10, Hidden: []int{1024, 1024}}
	benchGradientWith(b, spec, Options{Threads: threads}, 256)
}

// loopGemm is a textbook triple loop (test only): a kernel that allocates nothing.
type loopGemm struct{}

func (loopGemm) Sgemm(tA, tB blas.Transpose, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	at := func(s []float32, t blas.Transpose, ld, i, j int) float32 {
		if t == blas.NoTrans {
			return s[i*ld+j]
		}
		return s[j*ld+i]
	}
	for i := range m {
		for j := range n {
			var sum float32
			for p := range k {
				sum += at(a, tA, lda, i, p) * at(b, tB, ldb, p, j)
			}
			c[i*ldc+j] = alpha*sum + beta*c[i*ldc+j]
		}
	}
}

// TestGradientReadyAnnouncesFinalValues: each parameter is announced once,
// the first layer first (the order the next forward pass reads them in),
// and its gradient is final when announced (the pserver client sends it
// from then on).
func TestGradientReadyAnnouncesFinalValues(t *testing.T) {
	spec := Spec{Kind: KindMLP, Inputs: 30, Outputs: 4, Hidden: []int{20, 10}}
	m := mustNew(t, spec)
	rng := rand.New(rand.NewPCG(2, 3))
	params, b := randomParams(m, rng), randomBatch(spec, 9, rng)
	want := zeroParams(m)
	m.Gradient(params, b, want)
	got := zeroParams(m)
	var order []int
	snapshots := map[int][]float32{}
	m.GradientReady(params, b, got, func(j int) {
		order = append(order, j)
		snapshots[j] = append([]float32(nil), got[j]...)
	})
	if fmt.Sprint(order) != "[0 1 2 3 4 5]" {
		t.Fatalf("announced %v; want [0 1 2 3 4 5] (first layer first, each once)", order)
	}
	if j, k := firstBitDifference(want, got); j >= 0 {
		t.Fatalf("grad %d[%d] differs from Gradient's", j, k)
	}
	for j, snap := range snapshots {
		if j2, k := firstBitDifference([][]float32{snap}, [][]float32{want[j]}); j2 >= 0 {
			t.Errorf("param %d changed after it was announced (value %d)", j, k)
		}
	}
	var empty []int
	m.GradientReady(params, Batch{Inputs: 30}, got, func(j int) { empty = append(empty, j) })
	if len(empty) != 6 {
		t.Errorf("an empty batch announced %v; want every parameter", empty)
	}
}

// TestBandsCutWeightGradients: a weight gradient of m rows is cut into
// ⌈m/tile⌉ bands, none taller than a tile, the heights equal but
// for the last (784 rows: 200+200+200+184, not 256+256+256+16).
func TestBandsCutWeightGradients(t *testing.T) {
	if c := bands(784, 1024); c != (cut{rows: 200, cols: 1024}) {
		t.Errorf("bands(784, 1024) = %+v; want 200 rows of 1024", c)
	}
	for m := 1; m <= 3000; m++ {
		c := bands(m, 7)
		count := ceilDiv(m, c.rows)
		if c.cols != 7 || c.rows > tile || c.rows%8 != 0 || count != ceilDiv(m, tile) {
			t.Fatalf("bands(%d, 7) = %+v: %d bands", m, c, count)
		}
		if last := m - (count-1)*c.rows; last <= 0 || last > c.rows {
			t.Fatalf("bands(%d, 7) = %+v: last band %d rows", m, c, last)
		}
	}
}
