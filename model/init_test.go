package model

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestSplitmix64KnownValue(t *testing.T) {
	// First output of the reference splitmix64 generator seeded with 0.
	if got := splitmix64(0); got != 0xe220a8397b1dcdaf {
		t.Errorf("splitmix64(0) = %#x; want 0xe220a8397b1dcdaf", got)
	}
}

func TestInitMatchesPerElementFormula(t *testing.T) {
	specs := []Spec{
		{Kind: KindLinear, Inputs: 13, Outputs: 1},
		{Kind: KindSoftmax, Inputs: 20, Outputs: 10},
		{Kind: KindMLP, Inputs: 20, Outputs: 10, Hidden: []int{30, 16}},
	}
	const seed = 12345
	for _, spec := range specs {
		t.Run(spec.Kind, func(t *testing.T) {
			m := mustNew(t, spec)
			params := zeroParams(m)
			m.Init(seed, params)
			for j, p := range m.Params() {
				var limit float64
				switch {
				case len(p.Shape) == 1:
					limit = 0
				case spec.Kind == KindMLP:
					limit = math.Sqrt(6 / float64(p.Shape[0]+p.Shape[1]))
				default:
					limit = 0.01
				}
				distinct := map[float32]bool{}
				for i, v := range params[j] {
					want := float32(0)
					if limit > 0 {
						u := float64(hash3(seed, uint64(j), uint64(i))>>11) * 0x1p-53
						want = float32(-limit + 2*limit*u)
					}
					if v != want {
						t.Fatalf("%s[%d] = %v; formula gives %v", p.Name, i, v, want)
					}
					if float64(v) < -limit || float64(v) >= max(limit, math.SmallestNonzeroFloat64) {
						t.Fatalf("%s[%d] = %v outside [-%v, %v)", p.Name, i, v, limit, limit)
					}
					distinct[v] = true
				}
				if limit > 0 && len(distinct) < len(params[j])*9/10 {
					t.Errorf("%s: only %d distinct values among %d", p.Name, len(distinct), len(params[j]))
				}
			}
		})
	}
}

func TestInitRangeAnyPartitionAgrees(t *testing.T) {
	m := mustNew(t, Spec{Kind: KindMLP, Inputs: 17, Outputs: 4, Hidden: []int{9}})
	const seed = 7
	full := zeroParams(m)
	m.Init(seed, full)
	rng := rand.New(rand.NewPCG(3, 4))
	for j, p := range m.Params() {
		for range 20 {
			a := rng.IntN(p.Size() + 1)
			b := a + rng.IntN(p.Size()-a+1)
			part := make([]float32, b-a)
			InitRange(m, seed, j, a, part)
			for k, v := range part {
				if v != full[j][a+k] {
					t.Fatalf("%s: InitRange [%d,%d) element %d = %v; Init gives %v", p.Name, a, b, a+k, v, full[j][a+k])
				}
			}
		}
	}
}

func TestInitDependsOnSeedAndPosition(t *testing.T) {
	m := mustNew(t, Spec{Kind: KindSoftmax, Inputs: 8, Outputs: 4})
	a, b, again := zeroParams(m), zeroParams(m), zeroParams(m)
	m.Init(1, a)
	m.Init(2, b)
	m.Init(1, again)
	same := 0
	for i := range a[0] {
		if a[0][i] == b[0][i] {
			same++
		}
		if math.Float32bits(a[0][i]) != math.Float32bits(again[0][i]) {
			t.Fatalf("Init is not deterministic at w[%d]", i)
		}
	}
	if same > 1 {
		t.Errorf("seeds 1 and 2 agree on %d of %d weights", same, len(a[0]))
	}
	for _, v := range a[1] {
		if v != 0 {
			t.Errorf("bias %v; want 0", a[1])
			break
		}
	}
	// Init overwrites: a second Init into dirty buffers yields the same values.
	for i := range b[1] {
		b[1][i] = 9
	}
	m.Init(1, b)
	if b[1][0] != 0 || b[0][0] != a[0][0] {
		t.Errorf("Init into dirty buffers differs from Init into zeroed ones")
	}
}

func TestScaleToRangeStaysBelowOpenBound(t *testing.T) {
	// The largest u below 1 rounds up to the limit in float32; it must be pulled back.
	const limit = 0.5
	top := math.Nextafter(1, 0)
	if float32(-limit+2*limit*top) != limit {
		t.Fatal("test premise broken: the largest u no longer rounds to the limit")
	}
	if v := scaleToRange(top, limit); float64(v) >= limit {
		t.Errorf("scaleToRange(%v, %v) = %v; want < %v", top, limit, v, limit)
	}
	if v := scaleToRange(0, limit); v != -limit {
		t.Errorf("scaleToRange(0, %v) = %v; want %v", limit, v, -limit)
	}
}

func TestInitRangeRejectsOutOfBounds(t *testing.T) {
	m := mustNew(t, Spec{Kind: KindLinear, Inputs: 3, Outputs: 1})
	for _, tt := range []struct {
		name          string
		param, offset int
		n             int
	}{
		{"param too big", 2, 0, 1},
		{"negative offset", 0, -1, 1},
		{"past the end", 0, 2, 2},
	} {
		t.Run(tt.name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Errorf("InitRange(param %d, offset %d, len %d) did not panic", tt.param, tt.offset, tt.n)
				}
			}()
			InitRange(m, 1, tt.param, tt.offset, make([]float32, tt.n))
		})
	}
}
