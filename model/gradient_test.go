package model

import (
	"errors"
	"math"
	"math/rand/v2"
	"sync"
	"testing"
)

var gradientSpecs = []Spec{
	{Kind: KindLinear, Inputs: 5, Outputs: 1},
	{Kind: KindSoftmax, Inputs: 4, Outputs: 3},
	{Kind: KindMLP, Inputs: 4, Outputs: 3, Hidden: []int{6, 5}},
	{Kind: KindMLP, Inputs: 3, Outputs: 1, Hidden: []int{4}},
}

func TestGradientMatchesFiniteDifferences(t *testing.T) {
	const h = 1e-6
	for i, spec := range gradientSpecs {
		t.Run(spec.Kind, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(uint64(i), 42))
			m := mustNew(t, spec)
			params := randomParams(m, rng)
			b := randomBatch(spec, 7, rng)
			grads := zeroParams(m)
			lossSum := m.Gradient(params, b, grads)

			evalLoss, _ := m.Evaluate(params, b)
			if lossSum != evalLoss {
				t.Errorf("Gradient loss %v != Evaluate loss %v", lossSum, evalLoss)
			}

			p64 := widenParams(params)
			largest := 0.0
			for j, p := range m.Params() {
				for k := range p64[j] {
					orig := p64[j][k]
					p64[j][k] = orig + h
					up := refLoss(spec, p64, b)
					p64[j][k] = orig - h
					down := refLoss(spec, p64, b)
					p64[j][k] = orig
					numeric := (up - down) / (2 * h)
					analytic := float64(grads[j][k])
					// float32 arithmetic against a float64 reference.
					if math.Abs(analytic-numeric) > 1e-4+1e-3*math.Abs(numeric) {
						t.Errorf("%s[%d]: analytic %.8g, finite difference %.8g", p.Name, k, analytic, numeric)
					}
					largest = max(largest, math.Abs(numeric))
				}
			}
			if largest < 1e-2 {
				t.Fatalf("largest gradient %g: the check is vacuous", largest)
			}
		})
	}
}

func TestGradientAddsPerRecordSums(t *testing.T) {
	for i, spec := range gradientSpecs {
		t.Run(spec.Kind, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(uint64(i), 7))
			m := mustNew(t, spec)
			params := randomParams(m, rng)
			b := randomBatch(spec, 6, rng)

			whole := zeroParams(m)
			wholeLoss := m.Gradient(params, b, whole)

			// Accumulating record by record into the same buffers must give the
			// same sums: Gradient adds and does not average.
			perRecord := zeroParams(m)
			var recordLoss float64
			for r := range b.N {
				one := Batch{N: 1, Inputs: b.Inputs, X: b.X[r*b.Inputs : (r+1)*b.Inputs], Y: b.Y[r : r+1]}
				recordLoss += m.Gradient(params, one, perRecord)
			}
			if math.Abs(wholeLoss-recordLoss) > 1e-5*max(1, wholeLoss) { // float32 sums in another order
				t.Errorf("batch loss %v; sum of record losses %v", wholeLoss, recordLoss)
			}
			for j := range whole {
				for k := range whole[j] {
					if d := math.Abs(float64(whole[j][k] - perRecord[j][k])); d > 1e-5*max(1, math.Abs(float64(whole[j][k]))) {
						t.Errorf("param %d[%d]: batch gradient %v; sum of record gradients %v", j, k, whole[j][k], perRecord[j][k])
					}
				}
			}
		})
	}
}

func TestLinearHandComputed(t *testing.T) {
	m := mustNew(t, Spec{Kind: KindLinear, Inputs: 2, Outputs: 1})
	params := [][]float32{{1, 2}, {0.5}}
	b := Batch{N: 2, Inputs: 2, X: []float32{1, 1, 2, 0}, Y: []float32{3, 1}}
	// ŷ = (3.5, 2.5); residuals (0.5, 1.5); loss 0.25 + 2.25.
	// dL/dw = Σ 2(ŷ-y)x = (1,1) + (6,0); dL/db = 1 + 3.
	grads := [][]float32{{1, 1}, {1}} // Gradient must add to what is there
	if got := m.Gradient(params, b, grads); got != 2.5 {
		t.Errorf("loss sum = %v; want 2.5", got)
	}
	if grads[0][0] != 8 || grads[0][1] != 2 || grads[1][0] != 5 {
		t.Errorf("grads = %v; want [[8 2] [5]]", grads)
	}
	loss, correct := m.Evaluate(params, b)
	if loss != 2.5 || correct != 0 {
		t.Errorf("Evaluate = (%v, %d); want (2.5, 0)", loss, correct)
	}
}

func TestSoftmaxHugeLogitsStayFinite(t *testing.T) {
	m := mustNew(t, Spec{Kind: KindSoftmax, Inputs: 1, Outputs: 3})
	tests := []struct {
		name      string
		bias      []float32
		label     float32
		wantLoss  float64
		wantGradB []float32
	}{
		{"confident right", []float32{1e4, 0, -1e4}, 0, 0, []float32{0, 0, 0}},
		{"confident wrong", []float32{1e4, 0, -1e4}, 1, 1e4, []float32{1, -1, 0}},
		{"near float32 max", []float32{3e38, -3e38, 0}, 1, 2 * float64(float32(3e38)), []float32{1, -1, 0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			params := [][]float32{{0, 0, 0}, tt.bias}
			b := Batch{N: 1, Inputs: 1, X: []float32{1}, Y: []float32{tt.label}}
			grads := zeroParams(m)
			loss := m.Gradient(params, b, grads)
			if math.IsNaN(loss) || math.IsInf(loss, 0) {
				t.Fatalf("loss = %v; want finite", loss)
			}
			if math.Abs(loss-tt.wantLoss) > 1e-9*max(1, tt.wantLoss) {
				t.Errorf("loss = %v; want %v", loss, tt.wantLoss)
			}
			for k, g := range grads[1] {
				if math.Abs(float64(g-tt.wantGradB[k])) > 1e-6 {
					t.Errorf("grad b = %v; want %v", grads[1], tt.wantGradB)
					break
				}
			}
		})
	}
}

func TestEvaluateCountsArgmax(t *testing.T) {
	m := mustNew(t, Spec{Kind: KindSoftmax, Inputs: 1, Outputs: 3})
	x := []float32{0, 0, 0, 0}
	b := Batch{N: 4, Inputs: 1, X: x, Y: []float32{1, 1, 0, 2}}
	if _, correct := m.Evaluate([][]float32{{0, 0, 0}, {0, 5, 0}}, b); correct != 2 {
		t.Errorf("correct = %d; want 2 (class 1 predicted)", correct)
	}
	// Ties go to the lowest class index, so all-equal logits predict class 0.
	loss, correct := m.Evaluate([][]float32{{0, 0, 0}, {0, 0, 0}}, b)
	if correct != 1 {
		t.Errorf("correct with tied logits = %d; want 1", correct)
	}
	if want := 4 * math.Log(3); math.Abs(loss-want) > 1e-12 {
		t.Errorf("loss with uniform prediction = %v; want %v", loss, want)
	}

	reg := mustNew(t, Spec{Kind: KindMLP, Inputs: 1, Outputs: 1, Hidden: []int{2}})
	params := zeroParams(reg)
	if _, correct := reg.Evaluate(params, Batch{N: 1, Inputs: 1, X: []float32{0}, Y: []float32{0}}); correct != 0 {
		t.Errorf("regression mlp correct = %d; want 0", correct)
	}
}

func TestGradientIsDeterministicAndConcurrencySafe(t *testing.T) {
	for i, spec := range gradientSpecs {
		rng := rand.New(rand.NewPCG(uint64(i), 99))
		m := mustNew(t, spec)
		params := randomParams(m, rng)
		b := randomBatch(spec, 50, rng)
		want := zeroParams(m)
		wantLoss := m.Gradient(params, b, want)

		const workers = 4
		got := make([][][]float32, workers)
		losses := make([]float64, workers)
		var wg sync.WaitGroup
		for w := range workers {
			wg.Go(func() {
				got[w] = zeroParams(m)
				losses[w] = m.Gradient(params, b, got[w])
			})
		}
		wg.Wait()
		for w := range workers {
			if losses[w] != wantLoss {
				t.Errorf("%s: worker %d loss %v; want bit-identical %v", spec.Kind, w, losses[w], wantLoss)
			}
			for j := range want {
				for k := range want[j] {
					if math.Float32bits(got[w][j][k]) != math.Float32bits(want[j][k]) {
						t.Fatalf("%s: worker %d grad %d[%d] = %v; want bit-identical %v", spec.Kind, w, j, k, got[w][j][k], want[j][k])
					}
				}
			}
		}
	}
}

func TestEmptyBatch(t *testing.T) {
	m := mustNew(t, gradientSpecs[2])
	params := randomParams(m, rand.New(rand.NewPCG(1, 1)))
	grads := zeroParams(m)
	grads[0][0] = 3
	b := Batch{Inputs: m.Spec().Inputs}
	if loss := m.Gradient(params, b, grads); loss != 0 || grads[0][0] != 3 {
		t.Errorf("empty batch: loss %v, grads[0][0] %v; want 0 and untouched 3", loss, grads[0][0])
	}
	if loss, correct := m.Evaluate(params, b); loss != 0 || correct != 0 {
		t.Errorf("empty batch Evaluate = (%v, %d); want (0, 0)", loss, correct)
	}
}

func TestMisuseAnswersWithPanicNamingTheProblem(t *testing.T) {
	m := mustNew(t, Spec{Kind: KindSoftmax, Inputs: 2, Outputs: 3})
	params := zeroParams(m)
	good := Batch{N: 1, Inputs: 2, X: []float32{1, 2}, Y: []float32{1}}
	tests := []struct {
		name string
		call func()
		want error
	}{
		{"bad label", func() { m.Gradient(params, Batch{N: 1, Inputs: 2, X: []float32{1, 2}, Y: []float32{3}}, zeroParams(m)) }, ErrInvalidBatch},
		{"short X", func() { m.Evaluate(params, Batch{N: 2, Inputs: 2, X: []float32{1, 2}, Y: []float32{0, 1}}) }, ErrInvalidBatch},
		{"missing param", func() { m.Evaluate(params[:1], good) }, ErrParamMismatch},
		{"short grads", func() { m.Gradient(params, good, [][]float32{{0}, {0, 0, 0}}) }, ErrParamMismatch},
		{"short init", func() { m.Init(1, [][]float32{make([]float32, 6), nil}) }, ErrParamMismatch},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			defer func() {
				err, _ := recover().(error)
				if !errors.Is(err, tt.want) {
					t.Errorf("panic value %v; want an error wrapping %v", err, tt.want)
				}
			}()
			tt.call()
		})
	}
}

func BenchmarkLinearGradient(b *testing.B) {
	benchGradient(b, Spec{Kind: KindLinear, Inputs: 13, Outputs: 1}, 20)
}

// benchGradient times Gradient of a model of spec over records random records.
func benchGradient(b *testing.B, spec Spec, records int) {
	benchGradientWith(b, spec, Options{}, records)
}

func benchGradientWith(b *testing.B, spec Spec, o Options, records int) {
	m := mustNewWith(b, spec, o)
	rng := rand.New(rand.NewPCG(1, 2))
	params := randomParams(m, rng)
	batch := randomBatch(spec, records, rng)
	grads := zeroParams(m)
	b.ReportAllocs()
	for b.Loop() {
		m.Gradient(params, batch, grads)
	}
}

func zeroParams(m Model) [][]float32 {
	ps := m.Params()
	out := make([][]float32, len(ps))
	for j, p := range ps {
		out[j] = make([]float32, p.Size())
	}
	return out
}

func randomParams(m Model, rng *rand.Rand) [][]float32 {
	out := zeroParams(m)
	for _, p := range out {
		for k := range p {
			p[k] = float32(rng.Float64() - 0.5)
		}
	}
	return out
}

func randomBatch(s Spec, n int, rng *rand.Rand) Batch {
	b := Batch{N: n, Inputs: s.Inputs, X: make([]float32, n*s.Inputs), Y: make([]float32, n)}
	for i := range b.X {
		b.X[i] = float32(rng.NormFloat64())
	}
	for r := range b.Y {
		if s.isClassifier() {
			b.Y[r] = float32(rng.IntN(s.Outputs))
		} else {
			b.Y[r] = float32(rng.NormFloat64())
		}
	}
	return b
}

// BenchmarkSoftmaxGradient is a step_time micro-batch: softmax 784→10 over
// 32 records (Fashion-MNIST, 2 trainers × 32).
func BenchmarkSoftmaxGradient(b *testing.B) {
	benchGradient(b, Spec{Kind: KindSoftmax, Inputs: 784, Outputs: 10}, 32)
}
