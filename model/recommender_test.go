package model

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// recSpecs: a field of one id per record (user) and a multi-id weighted
// field of another dimension (genres), beside dense features; regression
// and classification.
var recSpecs = []RecSpec{
	{Fields: []string{"user", "genres"}, Dim: 3, Dims: map[string]int{"genres": 2}, Inputs: 2, Hidden: []int{5}, Outputs: 1},
	{Fields: []string{"user", "genres"}, Dim: 3, Dims: map[string]int{"genres": 2}, Inputs: 2, Hidden: []int{5}, Outputs: 3},
	{Fields: []string{"user", "item"}, Dim: 4, Outputs: 1}, // no dense features, no hidden layer
	// dot: the pairs (user, item) and (genres, tags), not user with genres
	{Fields: []string{"user", "genres", "item", "tags"}, Dim: 3, Dims: map[string]int{"genres": 2, "tags": 2}, Inputs: 2, Hidden: []int{5}, Outputs: 1, Interaction: InteractionDot},
	{Fields: []string{"user", "item"}, Dim: 4, Outputs: 3, Interaction: InteractionDot},
}

func mustNewRecommender(t testing.TB, s RecSpec, o Options) *Recommender {
	t.Helper()
	m, err := NewRecommenderWith(s, o)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// randomRecBatch builds n records: field 0 one id of 4 (so ids repeat
// across records), the other fields 0 to 3 ids of 5 with weights, and
// record 0 naming one id twice with different weights.
func randomRecBatch(m *Recommender, n int, rng *rand.Rand) RecBatch {
	s := m.spec
	b := RecBatch{N: n, Dense: make([]float32, n*s.Inputs), Y: make([]float32, n), Fields: make([]RecField, len(s.Fields))}
	for i := range b.Dense {
		b.Dense[i] = float32(rng.NormFloat64())
	}
	for r := range b.Y {
		if s.Outputs > 1 {
			b.Y[r] = float32(rng.IntN(s.Outputs))
		} else {
			b.Y[r] = float32(rng.NormFloat64())
		}
	}
	for i, t := range m.tables {
		f := &b.Fields[i]
		f.Reset()
		for r := range n {
			switch {
			case i == 0:
				f.Append([]uint64{uint64(rng.IntN(4)) << 40}, nil)
			case r == 0:
				f.Append([]uint64{7, 7, 3}, []float32{0.5, 1.5, -0.7})
			default:
				ids, ws := make([]uint64, rng.IntN(4)), make([]float32, 0, 3)
				for k := range ids {
					ids[k] = uint64(rng.IntN(5))
					ws = append(ws, float32(rng.Float64()+0.5))
				}
				f.Append(ids, ws)
			}
		}
		f.SizeRows(t.Dim)
		for k := range f.Rows {
			f.Rows[k] = float32(rng.Float64() - 0.5)
		}
	}
	return b
}

func zeroRecGrads(m *Recommender, b RecBatch) RecGrads {
	g := RecGrads{Dense: zeroParams(m.net)}
	g.ZeroRows(b)
	return g
}

// refRecLoss is the recommender's loss sum computed naively in float64 from
// float64 copies of the dense parameters and of each field's rows.
func refRecLoss(m *Recommender, params, rows [][]float64, b RecBatch) float64 {
	var total float64
	for r := range b.N {
		var a []float64
		var pooledOf [][]float64
		for i, t := range m.tables {
			f := &b.Fields[i]
			pooled := make([]float64, t.Dim)
			for e := f.Offsets[r]; e < f.Offsets[r+1]; e++ {
				u := int(f.Index[e])
				for k := range pooled {
					pooled[k] += float64(f.weight(e)) * rows[i][u*t.Dim+k]
				}
			}
			a = append(a, pooled...)
			pooledOf = append(pooledOf, pooled)
		}
		for _, v := range b.Dense[r*m.spec.Inputs : (r+1)*m.spec.Inputs] {
			a = append(a, float64(v))
		}
		for _, p := range m.spec.Pairs() {
			d := 0.0
			for k, v := range pooledOf[p[0]] {
				d += v * pooledOf[p[1]][k]
			}
			a = append(a, d)
		}
		total += refRecordLoss(m.net.spec, params, a, float64(b.Y[r]))
	}
	return total
}

func rowsOf(b RecBatch) [][]float32 {
	out := make([][]float32, len(b.Fields))
	for i, f := range b.Fields {
		out[i] = f.Rows
	}
	return out
}

// TestRecommenderGradientMatchesFiniteDifferences checks every dense
// parameter and every pulled row value against central differences of a
// float64 reference, for regression and classification, with a weighted
// multi-id field, an id twice in one record and ids shared by records.
func TestRecommenderGradientMatchesFiniteDifferences(t *testing.T) {
	const h = 1e-6
	for i, spec := range recSpecs {
		rng := rand.New(rand.NewPCG(uint64(i), 20))
		m := mustNewRecommender(t, spec, Options{})
		params := randomParams(m.net, rng)
		b := randomRecBatch(m, 9, rng)
		g := zeroRecGrads(m, b)
		loss := m.Gradient(params, b, g)
		if eval, _ := m.Evaluate(params, b); eval != loss {
			t.Errorf("spec %d: Gradient loss %v, Evaluate loss %v", i, loss, eval)
		}
		p64, r64 := widenParams(params), widenParams(rowsOf(b))
		if ref := refRecLoss(m, p64, r64, b); math.Abs(ref-loss) > 1e-5*math.Abs(ref) {
			t.Errorf("spec %d: loss %v, float64 reference %v", i, loss, ref)
		}
		check := func(what string, vals []float64, grads []float32) (largest float64) {
			for k := range vals {
				orig := vals[k]
				vals[k] = orig + h
				up := refRecLoss(m, p64, r64, b)
				vals[k] = orig - h
				down := refRecLoss(m, p64, r64, b)
				vals[k] = orig
				numeric, analytic := (up-down)/(2*h), float64(grads[k])
				if math.Abs(analytic-numeric) > 1e-4+1e-3*math.Abs(numeric) {
					t.Errorf("spec %d: %s[%d]: analytic %.8g, finite difference %.8g", i, what, k, analytic, numeric)
				}
				largest = max(largest, math.Abs(numeric))
			}
			return largest
		}
		for j, p := range m.Params() {
			check(p.Name, p64[j], g.Dense[j])
		}
		for f, tb := range m.Tables() {
			if largest := check("rows of "+tb.Field, r64[f], g.Rows[f]); largest < 1e-2 {
				t.Errorf("spec %d: field %s: largest row gradient %g: the check is vacuous", i, tb.Field, largest)
			}
		}
	}
}

// TestRecommenderIsDeterministic: the same inputs give the same bits, on
// any number of threads, and Gradient adds to what grads hold.
func TestRecommenderIsDeterministic(t *testing.T) {
	spec := RecSpec{Fields: []string{"user", "genres", "item"}, Dim: 16, Dims: map[string]int{"genres": 8}, Inputs: 3, Hidden: []int{300}, Outputs: 4, Interaction: InteractionDot}
	rng := rand.New(rand.NewPCG(3, 20))
	one := mustNewRecommender(t, spec, Options{Threads: 1})
	params := randomParams(one.net, rng)
	b := randomRecBatch(one, 300, rng)
	want := zeroRecGrads(one, b)
	wantLoss := one.Gradient(params, b, want)
	for _, threads := range []int{1, 3} {
		m := mustNewRecommender(t, spec, Options{Threads: threads})
		for range 2 {
			got := zeroRecGrads(m, b)
			if loss := m.Gradient(params, b, got); loss != wantLoss {
				t.Errorf("%d threads: loss %v, first run %v", threads, loss, wantLoss)
			}
			if j, k := firstBitDifference(got.Dense, want.Dense); j >= 0 {
				t.Errorf("%d threads: dense grad %d[%d] differs", threads, j, k)
			}
			if j, k := firstBitDifference(got.Rows, want.Rows); j >= 0 {
				t.Errorf("%d threads: row grad of field %d [%d] differs", threads, j, k)
			}
		}
	}
	twice := zeroRecGrads(one, b)
	one.Gradient(params, b, twice)
	one.Gradient(params, b, twice)
	if d := twice.Rows[1][0] - 2*want.Rows[1][0]; math.Abs(float64(d)) > 1e-6 {
		t.Errorf("two Gradient calls give row grad %v; want twice %v", twice.Rows[1][0], want.Rows[1][0])
	}
}

// TestRecommenderPureGoMatchesFastKernels: as TestPureGoMatchesFastKernels,
// with its tolerance, for the dense and the row gradients.
func TestRecommenderPureGoMatchesFastKernels(t *testing.T) {
	spec := RecSpec{Fields: []string{"user", "genres"}, Dim: 16, Inputs: 5, Hidden: []int{300, 64}, Outputs: 1}
	rng := rand.New(rand.NewPCG(4, 20))
	fast := mustNewRecommender(t, spec, Options{Threads: 2})
	slow := mustNewRecommender(t, spec, Options{Threads: 2, impl: pureGoGemm})
	params := randomParams(fast.net, rng)
	for _, p := range params {
		for k := range p {
			p[k] *= 0.1
		}
	}
	b := randomRecBatch(fast, 270, rng)
	gFast, gSlow := zeroRecGrads(fast, b), zeroRecGrads(slow, b)
	lFast, lSlow := fast.Gradient(params, b, gFast), slow.Gradient(params, b, gSlow)
	if math.Abs(lFast-lSlow) > 1e-5*math.Abs(lSlow) {
		t.Errorf("loss: fast %v, pure-Go %v", lFast, lSlow)
	}
	for _, pair := range [][2][][]float32{{gFast.Dense, gSlow.Dense}, {gFast.Rows, gSlow.Rows}} {
		for j := range pair[0] {
			largest := 0.0
			for _, v := range pair[1][j] {
				largest = max(largest, math.Abs(float64(v)))
			}
			for k := range pair[0][j] {
				if d := math.Abs(float64(pair[0][j][k] - pair[1][j][k])); d > 1e-4*largest {
					t.Fatalf("grad %d[%d]: fast %v, pure-Go %v (largest %v)", j, k, pair[0][j][k], pair[1][j][k], largest)
				}
			}
		}
	}
}

// TestRecommenderGradientReady: each dense parameter is announced once,
// the first layer first, and the gradients are those of Gradient.
func TestRecommenderGradientReady(t *testing.T) {
	m := mustNewRecommender(t, recSpecs[0], Options{})
	rng := rand.New(rand.NewPCG(8, 20))
	params := randomParams(m.net, rng)
	b := randomRecBatch(m, 5, rng)
	want, got := zeroRecGrads(m, b), zeroRecGrads(m, b)
	m.Gradient(params, b, want)
	var order []int
	m.GradientReady(params, b, got, func(j int) { order = append(order, j) })
	if fmt.Sprint(order) != "[0 1 2 3]" {
		t.Errorf("announced %v; want [0 1 2 3]", order)
	}
	if j, k := firstBitDifference(append(got.Dense, got.Rows...), append(want.Dense, want.Rows...)); j >= 0 {
		t.Errorf("gradient %d[%d] differs from Gradient's", j, k)
	}
	order = nil
	m.GradientReady(params, RecBatch{Fields: make([]RecField, 2)}, RecGrads{Dense: got.Dense, Rows: make([][]float32, 2)}, func(j int) { order = append(order, j) })
	if len(order) != 4 {
		t.Errorf("an empty batch announced %v; want every dense parameter", order)
	}
}

// TestRecommenderGradientDoesNotAllocate: a step reuses its buffers.
func TestRecommenderGradientDoesNotAllocate(t *testing.T) {
	for _, spec := range []RecSpec{recSpecs[1], recSpecs[3]} {
		m := mustNewRecommender(t, spec, Options{Threads: 1, impl: loopGemm{}})
		rng := rand.New(rand.NewPCG(5, 20))
		params := randomParams(m.net, rng)
		b := randomRecBatch(m, 32, rng)
		g := zeroRecGrads(m, b)
		if allocs := testing.AllocsPerRun(20, func() { m.Gradient(params, b, g); m.Evaluate(params, b) }); allocs > 0 {
			t.Errorf("interaction %q: Gradient and Evaluate allocate %v times per call; want 0", spec.Interaction, allocs)
		}
	}
}

func TestRecSpecValidateNamesTheField(t *testing.T) {
	base := func() RecSpec {
		return RecSpec{Fields: []string{"user", "genres"}, Dim: 8, Dims: map[string]int{"genres": 4}, Hidden: []int{16}, Outputs: 1}
	}
	tests := []struct {
		name  string
		edit  func(*RecSpec)
		field string
	}{
		{"dim 0", func(s *RecSpec) { s.Dim = 0 }, "model.dim:"},
		{"table dim 0", func(s *RecSpec) { s.Dims["genres"] = 0 }, "model.tables.genres.dim:"},
		{"table of no field", func(s *RecSpec) { s.Dims["movie"] = 4 }, "model.tables.movie:"},
		{"no fields", func(s *RecSpec) { s.Fields = nil }, "model.tables:"},
		{"field twice", func(s *RecSpec) { s.Fields = append(s.Fields, "user") }, "model.tables.user:"},
		{"empty field name", func(s *RecSpec) { s.Fields[0] = "" }, "model.tables:"},
		{"negative inputs", func(s *RecSpec) { s.Inputs = -1 }, "model.inputs:"},
		{"no outputs", func(s *RecSpec) { s.Outputs = 0 }, "model.outputs:"},
		{"hidden 0", func(s *RecSpec) { s.Hidden = []int{16, 0} }, "model.hidden[1]:"},
		{"unknown interaction", func(s *RecSpec) { s.Interaction = "cross" }, "model.interaction:"},
		{"dot without two fields of one dim", func(s *RecSpec) { s.Interaction = InteractionDot }, "model.interaction:"},
	}
	for _, tt := range tests {
		s := base()
		tt.edit(&s)
		_, err := NewRecommender(s)
		if !errors.Is(err, ErrInvalidSpec) || !strings.HasPrefix(err.Error(), tt.field) {
			t.Errorf("%s: error %v; want one naming %s", tt.name, err, tt.field)
		}
	}
	ok := base()
	ok.Dim, ok.Dims = 0, map[string]int{"user": 8, "genres": 4} // every field sets its own
	if _, err := NewRecommender(ok); err != nil {
		t.Errorf("every table with its own dim, model.dim 0: %v", err)
	}
	if (Spec{Kind: KindRecommender, Inputs: 1, Outputs: 1}).Validate() == nil {
		t.Errorf("Spec.Validate accepts kind recommender; New cannot build it")
	}
}

func TestRecSpecCheckBatchNamesTheField(t *testing.T) {
	m := mustNewRecommender(t, recSpecs[1], Options{})
	rng := rand.New(rand.NewPCG(6, 20))
	tests := []struct {
		name string
		edit func(*RecBatch)
		want string
	}{
		{"row index past the rows", func(b *RecBatch) { b.Fields[1].Index[0] = int32(len(b.Fields[1].IDs)) }, `id field "genres": entry 0: row index`},
		{"rows not a multiple of dim", func(b *RecBatch) { b.Fields[0].Rows = b.Fields[0].Rows[1:] }, `id field "user": len(Rows)`},
		{"offsets short", func(b *RecBatch) { b.Fields[1].Offsets = b.Fields[1].Offsets[1:] }, `id field "genres": offsets`},
		{"weights short", func(b *RecBatch) { b.Fields[1].Weights = b.Fields[1].Weights[1:] }, `id field "genres":`},
		{"a field missing", func(b *RecBatch) { b.Fields = b.Fields[:1] }, "1 id fields, the model has 2 (user, genres)"},
		{"label not a class", func(b *RecBatch) { b.Y[2] = 3 }, "record 2: label 3"},
		{"dense short", func(b *RecBatch) { b.Dense = b.Dense[1:] }, "len(Dense)"},
	}
	for _, tt := range tests {
		b := randomRecBatch(m, 6, rng)
		if err := m.spec.CheckBatch(b); err != nil {
			t.Fatalf("%s: a good batch fails: %v", tt.name, err)
		}
		tt.edit(&b)
		if err := m.spec.CheckBatch(b); !errors.Is(err, ErrInvalidBatch) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: error %v; want one with %q", tt.name, err, tt.want)
		}
	}
}

// TestRecFieldAppend: ids get row indices by first appearance; a weighted
// record after unweighted ones gives the earlier entries weight 1.
func TestRecFieldAppend(t *testing.T) {
	var f RecField
	f.Reset()
	f.Append([]uint64{9, 4}, nil)
	f.Append(nil, nil)
	f.Append([]uint64{4, 1 << 63}, []float32{2, 3})
	got := [][]any{{f.IDs}, {f.Offsets}, {f.Index}, {f.Weights}}
	want := "[[[9 4 9223372036854775808]] [[0 2 2 4]] [[0 1 1 2]] [[1 1 2 3]]]"
	if s := fmt.Sprint(got); s != want {
		t.Errorf("field %s; want %s", s, want)
	}
	f.Reset()
	f.Append([]uint64{4}, nil)
	if len(f.IDs) != 1 || f.IDs[0] != 4 || len(f.Weights) != 0 || len(f.Offsets) != 2 || f.Index[0] != 0 {
		t.Errorf("after Reset: %+v", f)
	}
}

// TestRecSpecDotPairs: dot pairs the fields of equal dimension and widens
// w0 by one row per pair; concat (named or not) pairs none.
func TestRecSpecDotPairs(t *testing.T) {
	s := recSpecs[3]
	if got := fmt.Sprint(s.Pairs()); got != "[[0 2] [1 3]]" {
		t.Errorf("pairs %s; want [[0 2] [1 3]] (user·item, genres·tags)", got)
	}
	m := mustNewRecommender(t, s, Options{})
	if got := m.Params()[0].Shape[0]; got != 3+2+3+2+2+2 {
		t.Errorf("w0 has %d rows; want 14 (pooled 10, dense 2, dots 2)", got)
	}
	for _, k := range []string{"", InteractionConcat} {
		s.Interaction = k
		if p := s.Pairs(); p != nil {
			t.Errorf("interaction %q: pairs %v; want none", k, p)
		}
	}
}
