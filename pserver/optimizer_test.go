package pserver

import (
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// step is one call of Update and the state expected after it, worked out by hand.
type step struct {
	g              []float32
	wantP          []float64
	wantS0, wantS1 []float64 // slot contents after the step; nil = not checked
}

func TestOptimizerHandComputed(t *testing.T) {
	tests := []struct {
		name  string
		cfg   OptimizerConfig
		p0    []float32
		steps []step
	}{
		{
			// p -= 0.1*g
			name: "sgd", cfg: OptimizerConfig{Kind: "sgd", LearningRate: 0.1},
			p0: []float32{1, -2, 0.5},
			steps: []step{
				{g: []float32{0.5, 1, -2}, wantP: []float64{0.95, -2.1, 0.7}},
				{g: []float32{0.5, -1, 0}, wantP: []float64{0.9, -2.0, 0.7}},
			},
		},
		{
			// v = 0.9v + g; p -= 0.1v
			// step 2: v = 0.9*0.5+0.5 = 0.95, 0.9*1-1 = -0.1
			name: "momentum", cfg: OptimizerConfig{Kind: "momentum", LearningRate: 0.1, Momentum: 0.9},
			p0: []float32{1, -2},
			steps: []step{
				{g: []float32{0.5, 1}, wantP: []float64{0.95, -2.1}, wantS0: []float64{0.5, 1}},
				{g: []float32{0.5, -1}, wantP: []float64{0.855, -2.09}, wantS0: []float64{0.95, -0.1}},
			},
		},
		{
			// a += g²; p -= 0.1*g/(sqrt(a)+1). eps = 1 so that sqrt(a)+eps is told
			// apart from sqrt(a+eps): step 1: 1-0.3/4, -2-0.4/5;
			// step 2: a = 25, 25: 0.925-0.4/6, -2.08-0.3/6.
			name: "adagrad", cfg: OptimizerConfig{Kind: "adagrad", LearningRate: 0.1, Epsilon: 1},
			p0: []float32{1, -2},
			steps: []step{
				{g: []float32{3, 4}, wantP: []float64{0.925, -2.08}, wantS0: []float64{9, 16}},
				{g: []float32{4, 3}, wantP: []float64{0.8583333333, -2.13}, wantS0: []float64{25, 25}},
			},
		},
		{
			// Textbook form, b1 = 0.5, b2 = 0.75, eps = 0.25:
			// t=1: m = 1,-2,0; v = 1,4,0; mhat = 2,-4,0; vhat = 4,16,0;
			//      p = 1-0.2/2.25, -2+0.4/4.25, 0.5 (0/(0+eps): a zero gradient moves nothing).
			// t=2: m = 1,0,-0.5; v = 1,4,0.25; 1-b1² = 0.75; 1-b2² = 0.4375;
			//      p0 -= 0.1*(1/0.75)/(sqrt(1/0.4375)+0.25);
			//      p2 -= 0.1*(-0.5/0.75)/(sqrt(0.25/0.4375)+0.25).
			name: "adam", cfg: OptimizerConfig{Kind: "adam", LearningRate: 0.1, Beta1: 0.5, Beta2: 0.75, Epsilon: 0.25},
			p0: []float32{1, -2, 0.5},
			steps: []step{
				{
					g:      []float32{2, -4, 0},
					wantP:  []float64{0.9111111111, -1.9058823529, 0.5},
					wantS0: []float64{1, -2, 0}, wantS1: []float64{1, 4, 0},
				},
				{
					g:      []float32{1, 2, -1},
					wantP:  []float64{0.8354334220, -1.9058823529, 0.5662737330},
					wantS0: []float64{1, 0, -0.5}, wantS1: []float64{1, 4, 0.25},
				},
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { checkSteps(t, tc.cfg, tc.p0, tc.steps) })
	}
}

// checkSteps applies steps to p0 with a new optimizer of cfg and checks the
// parameters and slots after each.
func checkSteps(t *testing.T, cfg OptimizerConfig, p0 []float32, steps []step) {
	t.Helper()
	const tol = 1e-6
	opt, err := NewOptimizer(cfg)
	if err != nil {
		t.Fatalf("NewOptimizer(%+v): %v", cfg, err)
	}
	p := append([]float32(nil), p0...)
	slots := newSlots(opt.Slots(), len(p))
	for i, st := range steps {
		opt.Update(p, st.g, slots, int64(i+1))
		assertClose(t, "p", i+1, p, st.wantP, tol)
		if st.wantS0 != nil {
			assertClose(t, "slot 0", i+1, slots[0], st.wantS0, tol)
		}
		if st.wantS1 != nil {
			assertClose(t, "slot 1", i+1, slots[1], st.wantS1, tol)
		}
	}
}

func assertClose(t *testing.T, what string, step int, got []float32, want []float64, tol float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("step %d: %s has %d elements, want %d", step, what, len(got), len(want))
	}
	for i := range want {
		if d := math.Abs(float64(got[i]) - want[i]); !(d <= tol) {
			t.Errorf("step %d: %s[%d] = %.9f, want %.9f (off by %g)", step, what, i, got[i], want[i], d)
		}
	}
}

func TestOptimizerSlots(t *testing.T) {
	want := map[string]int{"sgd": 0, "momentum": 1, "adagrad": 1, "adam": 2}
	for kind, n := range want {
		opt, err := NewOptimizer(OptimizerConfig{Kind: kind, LearningRate: 0.01}.WithDefaults())
		if err != nil {
			t.Fatalf("%s: %v", kind, err)
		}
		if got := opt.Slots(); got != n {
			t.Errorf("%s: Slots() = %d, want %d", kind, got, n)
		}
	}
}

// TestOptimizerBlockSplitBitIdentical is the property partitioning relies on:
// updating a vector in blocks gives exactly the bits of updating it whole.
func TestOptimizerBlockSplitBitIdentical(t *testing.T) {
	const n = 1031
	rng := rand.New(rand.NewPCG(7, 11))
	for _, kind := range []string{"sgd", "momentum", "adagrad", "adam"} {
		t.Run(kind, func(t *testing.T) {
			opt, err := NewOptimizer(OptimizerConfig{Kind: kind, LearningRate: 0.05}.WithDefaults())
			if err != nil {
				t.Fatal(err)
			}
			whole := randVector(rng, n)
			split := append([]float32(nil), whole...)
			wholeSlots := newSlots(opt.Slots(), n)
			splitSlots := newSlots(opt.Slots(), n)
			cuts := []int{0, 1, 17, 500, 501, n}
			for step := int64(1); step <= 5; step++ {
				g := randVector(rng, n)
				opt.Update(whole, g, wholeSlots, step)
				for c := 0; c+1 < len(cuts); c++ {
					lo, hi := cuts[c], cuts[c+1]
					opt.Update(split[lo:hi], g[lo:hi], sliceSlots(splitSlots, lo, hi), step)
				}
			}
			assertBitIdentical(t, "p", whole, split)
			for s := range wholeSlots {
				assertBitIdentical(t, "slot", wholeSlots[s], splitSlots[s])
			}
		})
	}
}

func assertBitIdentical(t *testing.T, what string, a, b []float32) {
	t.Helper()
	for i := range a {
		if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
			t.Fatalf("%s[%d]: whole %v, split %v", what, i, a[i], b[i])
		}
	}
}

func TestOptimizerUsesOnlyLenP(t *testing.T) {
	opt, err := NewOptimizer(OptimizerConfig{Kind: "momentum", LearningRate: 1, Momentum: 0.5})
	if err != nil {
		t.Fatal(err)
	}
	p := []float32{1, 1}
	g := []float32{1, 1, 99}
	slots := [][]float32{{0, 0, 42}}
	opt.Update(p, g, slots, 1)
	if slots[0][2] != 42 {
		t.Errorf("slot beyond len(p) changed to %v", slots[0][2])
	}
	if p[0] != 0 || p[1] != 0 {
		t.Errorf("p = %v, want [0 0]", p)
	}
}

func TestOptimizerPanics(t *testing.T) {
	adam, err := NewOptimizer(OptimizerConfig{Kind: "adam", LearningRate: 0.1}.WithDefaults())
	if err != nil {
		t.Fatal(err)
	}
	sgd, err := NewOptimizer(OptimizerConfig{Kind: "sgd", LearningRate: 0.1})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		call func()
	}{
		{"adam step 0", func() { adam.Update(make([]float32, 2), make([]float32, 2), newSlots(2, 2), 0) }},
		{"adam short slot", func() { adam.Update(make([]float32, 2), make([]float32, 2), newSlots(2, 1), 1) }},
		{"sgd short gradient", func() { sgd.Update(make([]float32, 3), make([]float32, 2), nil, 1) }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Errorf("did not panic")
				}
			}()
			tc.call()
		})
	}
}

func TestOptimizerConfigValidate(t *testing.T) {
	nan := math.NaN()
	inf := math.Inf(1)
	tests := []struct {
		name    string
		cfg     OptimizerConfig
		wantErr error
		field   string
	}{
		{"unknown kind", OptimizerConfig{Kind: "rmsprop", LearningRate: 0.1}, ErrUnknownOptimizer, `"rmsprop"`},
		{"empty kind", OptimizerConfig{LearningRate: 0.1}, ErrUnknownOptimizer, "Kind"},
		{"zero lr", OptimizerConfig{Kind: "sgd"}, ErrOptimizerConfig, "LearningRate"},
		{"negative lr", OptimizerConfig{Kind: "sgd", LearningRate: -1}, ErrOptimizerConfig, "LearningRate"},
		{"NaN lr", OptimizerConfig{Kind: "adam", LearningRate: nan, Beta1: 0.9, Beta2: 0.9, Epsilon: 1}, ErrOptimizerConfig, "LearningRate"},
		{"inf lr", OptimizerConfig{Kind: "sgd", LearningRate: inf}, ErrOptimizerConfig, "LearningRate"},
		{"momentum 1", OptimizerConfig{Kind: "momentum", LearningRate: 0.1, Momentum: 1}, ErrOptimizerConfig, "Momentum"},
		{"momentum negative", OptimizerConfig{Kind: "momentum", LearningRate: 0.1, Momentum: -0.1}, ErrOptimizerConfig, "Momentum"},
		{"adagrad zero eps", OptimizerConfig{Kind: "adagrad", LearningRate: 0.1}, ErrOptimizerConfig, "Epsilon"},
		{"adam beta1 1", OptimizerConfig{Kind: "adam", LearningRate: 0.1, Beta1: 1, Beta2: 0.9, Epsilon: 1e-8}, ErrOptimizerConfig, "Beta1"},
		{"adam beta2 NaN", OptimizerConfig{Kind: "adam", LearningRate: 0.1, Beta1: 0.9, Beta2: nan, Epsilon: 1e-8}, ErrOptimizerConfig, "Beta2"},
		{"adam eps inf", OptimizerConfig{Kind: "adam", LearningRate: 0.1, Beta1: 0.9, Beta2: 0.9, Epsilon: inf}, ErrOptimizerConfig, "Epsilon"},
		{"sgd ignores other fields", OptimizerConfig{Kind: "sgd", LearningRate: 0.1, Momentum: 7, Beta1: -1}, nil, ""},
		{"adam with zero beta1", OptimizerConfig{Kind: "adam", LearningRate: 0.1, Beta2: 0.9, Epsilon: 1e-8}, nil, ""},
		{"momentum zero", OptimizerConfig{Kind: "momentum", LearningRate: 0.1}, nil, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.cfg.Validate()
			if tc.wantErr == nil {
				if err != nil {
					t.Fatalf("Validate(%+v) = %v, want nil", tc.cfg, err)
				}
				return
			}
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("Validate(%+v) = %v, want %v", tc.cfg, err, tc.wantErr)
			}
			if !strings.Contains(err.Error(), tc.field) {
				t.Errorf("error %q does not name %s", err, tc.field)
			}
			if _, nerr := NewOptimizer(tc.cfg); !errors.Is(nerr, tc.wantErr) {
				t.Errorf("NewOptimizer accepted what Validate rejects: %v", nerr)
			}
		})
	}
}

func TestOptimizerConfigWithDefaults(t *testing.T) {
	tests := []struct {
		in, want OptimizerConfig
	}{
		{
			OptimizerConfig{Kind: "adam", LearningRate: 0.01},
			OptimizerConfig{Kind: "adam", LearningRate: 0.01, Beta1: 0.9, Beta2: 0.999, Epsilon: 1e-8},
		},
		{
			OptimizerConfig{Kind: "adam", LearningRate: 0.01, Beta2: 0.99},
			OptimizerConfig{Kind: "adam", LearningRate: 0.01, Beta1: 0.9, Beta2: 0.99, Epsilon: 1e-8},
		},
		{
			OptimizerConfig{Kind: "momentum", LearningRate: 0.01},
			OptimizerConfig{Kind: "momentum", LearningRate: 0.01, Momentum: 0.9},
		},
		{
			OptimizerConfig{Kind: "adagrad", LearningRate: 0.01, Epsilon: 1e-6},
			OptimizerConfig{Kind: "adagrad", LearningRate: 0.01, Epsilon: 1e-6},
		},
		{
			// the learning rate has no default: a missing one must fail Validate.
			OptimizerConfig{Kind: "sgd"},
			OptimizerConfig{Kind: "sgd"},
		},
	}
	for _, tc := range tests {
		if got := tc.in.WithDefaults(); got != tc.want {
			t.Errorf("%+v.WithDefaults() = %+v, want %+v", tc.in, got, tc.want)
		}
	}
}

func TestMeasureHelpers(t *testing.T) {
	for _, kind := range []string{"sgd", "adam"} {
		rate, err := MeasureOptimizer(kind, 4096, 3)
		if err != nil {
			t.Fatalf("MeasureOptimizer(%s): %v", kind, err)
		}
		if !(rate > 0) {
			t.Errorf("MeasureOptimizer(%s) = %v params/s, want > 0", kind, rate)
		}
	}
	if _, err := MeasureOptimizer("lbfgs", 10, 1); !errors.Is(err, ErrUnknownOptimizer) {
		t.Errorf("MeasureOptimizer(lbfgs) err = %v, want ErrUnknownOptimizer", err)
	}
	if _, err := MeasureOptimizer("sgd", 0, 1); !errors.Is(err, ErrOptimizerConfig) {
		t.Errorf("MeasureOptimizer(n=0) err = %v, want ErrOptimizerConfig", err)
	}
	if bw := MeasureMemBandwidth(1<<16, 3); !(bw > 0) {
		t.Errorf("MeasureMemBandwidth = %v, want > 0", bw)
	}
}

func newSlots(k, n int) [][]float32 {
	slots := make([][]float32, k)
	for i := range slots {
		slots[i] = make([]float32, n)
	}
	return slots
}

func sliceSlots(slots [][]float32, lo, hi int) [][]float32 {
	out := make([][]float32, len(slots))
	for i, s := range slots {
		out[i] = s[lo:hi]
	}
	return out
}

func randVector(rng *rand.Rand, n int) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(rng.NormFloat64())
	}
	return v
}
