package model

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

// plantedRatings is a MovieLens-shaped toy: rating = user·item + noise, with
// planted factors, so that the best achievable RMSE is the noise's.
type plantedRatings struct {
	users, items [][]float64
	noise        float64
}

func newPlantedRatings(users, items, dim int, noise float64, rng *rand.Rand) plantedRatings {
	factors := func(n int) [][]float64 {
		out := make([][]float64, n)
		for i := range out {
			out[i] = make([]float64, dim)
			for k := range out[i] {
				out[i][k] = 0.85 * rng.NormFloat64() // user·item has variance about 1
			}
		}
		return out
	}
	return plantedRatings{users: factors(users), items: factors(items), noise: noise}
}

type rating struct {
	user, item uint64
	y          float32
}

func (p plantedRatings) sample(n int, rng *rand.Rand) []rating {
	out := make([]rating, n)
	for r := range out {
		u, i := rng.IntN(len(p.users)), rng.IntN(len(p.items))
		dot := 0.0
		for k := range p.users[u] {
			dot += p.users[u][k] * p.items[i][k]
		}
		out[r] = rating{user: uint64(u), item: uint64(1000 + i), y: float32(dot + p.noise*rng.NormFloat64())}
	}
	return out
}

// recTrainer stands in for a trainer and its pservers: tables of rows
// created on first use (uniform ±0.05, as pserver tables start), plain SGD
// on the batch's mean gradient.
type recTrainer struct {
	m      *Recommender
	params [][]float32
	tables []map[uint64][]float32
	b      RecBatch
	rng    *rand.Rand
}

func (tr *recTrainer) load(rs []rating) {
	tr.b.N, tr.b.Y = len(rs), tr.b.Y[:0]
	for _, r := range rs {
		tr.b.Y = append(tr.b.Y, r.y)
	}
	for f, t := range tr.m.tables {
		fb := &tr.b.Fields[f]
		fb.Reset()
		for _, r := range rs {
			fb.Append([]uint64{[]uint64{r.user, r.item}[f]}, nil)
		}
		fb.SizeRows(t.Dim)
		for u, id := range fb.IDs {
			row, ok := tr.tables[f][id]
			if !ok {
				row = make([]float32, t.Dim)
				for k := range row {
					row[k] = float32(0.1*tr.rng.Float64() - 0.05)
				}
				tr.tables[f][id] = row
			}
			copy(fb.Rows[u*t.Dim:], row)
		}
	}
}

func (tr *recTrainer) step(rs []rating, lr float32, g RecGrads) {
	tr.load(rs)
	for _, d := range g.Dense {
		clear(d)
	}
	g.ZeroRows(tr.b)
	tr.m.Gradient(tr.params, tr.b, g)
	scale := lr / float32(len(rs))
	for j, d := range g.Dense {
		axpy(tr.params[j], -scale, d)
	}
	for f, t := range tr.m.tables {
		for u, id := range tr.b.Fields[f].IDs {
			axpy(tr.tables[f][id], -scale, g.Rows[f][u*t.Dim:(u+1)*t.Dim])
		}
	}
}

func (tr *recTrainer) rmse(rs []rating) float64 {
	tr.load(rs)
	loss, _ := tr.m.Evaluate(tr.params, tr.b)
	return math.Sqrt(loss / float64(len(rs)))
}

// TestRecommenderLearnsPlantedFactors: plain SGD on 400 ratings of 8 users
// by 8 items brings the RMSE of 400 held-out ratings from the ratings' own spread
// (about 1) to within 1.25× the planted noise (0.1).
func TestRecommenderLearnsPlantedFactors(t *testing.T) {
	start := time.Now()
	rng := rand.New(rand.NewPCG(7, 20))
	planted := newPlantedRatings(8, 8, 2, 0.1, rng)
	train, test := planted.sample(400, rng), planted.sample(400, rng)
	m := mustNewRecommender(t, RecSpec{Fields: []string{"user", "movie"}, Dim: 8, Hidden: []int{32}, Outputs: 1}, Options{Threads: 1})
	tr := &recTrainer{m: m, params: zeroParams(m.net), tables: []map[uint64][]float32{{}, {}},
		b: RecBatch{Fields: make([]RecField, 2)}, rng: rng}
	m.Init(1, tr.params)
	before := tr.rmse(test)
	g := RecGrads{Dense: zeroParams(m.net)}
	const batch = 20
	for range 150 { // passes
		for i := 0; i < len(train); i += batch {
			tr.step(train[i:i+batch], 0.1, g)
		}
	}
	after := tr.rmse(test)
	t.Logf("held-out RMSE %.4f before training, %.4f after; planted noise %.2f; %v", before, after, planted.noise, time.Since(start))
	// Averaging each of the 64 pairs' 6 or so noisy ratings would give
	// about noise·√(1+1/6) = 1.08 noise.
	if after > 1.25*planted.noise {
		t.Errorf("held-out RMSE %.4f after training; want within 1.25× the planted noise %.2f (before: %.4f)", after, planted.noise, before)
	}
}
