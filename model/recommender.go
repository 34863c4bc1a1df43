package model

import "fmt"

// Recommender is the built-in recommender (RecSpec): per id field, the
// rows a record names, pooled by weighted sum; the pooled vectors, the
// dense features and, with interaction dot, the pooled vectors' pairwise
// dot products feed an MLP. It computes on what a trainer holds for one
// micro-batch: the dense parameters (w0, b0, ... as mlp's, on the
// pservers like any model's) and, per field, the distinct rows the batch
// touches as pulled (RecField). It returns the dense gradients and, per
// field, one gradient per distinct row: what the trainer pushes.
//
// Like network, it holds no mutable state but its scratch buffers: one
// Recommender may be used from many goroutines at once, and a call
// allocates nothing once its buffers have grown to the batch.
type Recommender struct {
	spec   RecSpec
	tables []RecTable
	cols   []int    // where each field's pooled vector starts in the MLP's input
	dense  int      // where the dense features start
	pairs  [][2]int // the dot interaction's pairs of fields (RecSpec.Pairs)
	dots   int      // where their dot products start
	net    *network
}

// NewRecommender builds the recommender described by s.
func NewRecommender(s RecSpec) (*Recommender, error) {
	return NewRecommenderWith(s, Options{})
}

// NewRecommenderWith builds the recommender described by s, computing as o says.
func NewRecommenderWith(s RecSpec, o Options) (*Recommender, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	m := &Recommender{spec: s.clone(), tables: s.Tables(), net: newNetwork(s.mlpSpec(), o)}
	for _, t := range m.tables {
		m.cols = append(m.cols, m.dense)
		m.dense += t.Dim
	}
	m.pairs, m.dots = s.Pairs(), m.dense+s.Inputs
	return m, nil
}

// Spec returns the spec the recommender was built from.
func (m *Recommender) Spec() RecSpec { return m.spec.clone() }

// CheckBatch is RecSpec.CheckBatch of the recommender's spec, without the
// copy Spec makes: a trainer checks every micro-batch.
func (m *Recommender) CheckBatch(b RecBatch) error { return m.spec.CheckBatch(b) }

// Params lists the dense parameters: the MLP's w0, b0, w1, b1, ... (w0 has
// one row per MLP input: each field's pooled vector in Fields' order, then
// the dense features, then the dot interaction's products in Pairs' order).
func (m *Recommender) Params() []ParamSpec { return m.net.Params() }

// Tables lists the embedding tables, in Fields' order.
func (m *Recommender) Tables() []RecTable { return append([]RecTable(nil), m.tables...) }

// Init fills the dense parameters as Model.Init does (mlp's Glorot
// uniform weights, zero biases): element i of param j depends only on
// (seed, j, i). Rows start as the pservers' tables make them.
func (m *Recommender) Init(seed uint64, params [][]float32) { m.net.Init(seed, params) }

// InitRange fills dst with elements [offset, offset+len(dst)) of dense
// parameter param, exactly as Init would (see the package's InitRange).
func (m *Recommender) InitRange(seed uint64, param, offset int, dst []float32) {
	InitRange(m.net, seed, param, offset, dst)
}

// Gradient adds to g the sums over the batch of d(loss_r)/d(theta) and
// returns the sum of per-record losses (squared error without ½ for one
// output, cross-entropy for classes), as Model.Gradient. g.Rows[f][u*dim+k]
// receives the gradient of the batch's distinct row u of field f, summed
// over the entries naming it in record order, then entry order within a
// record: the same inputs give the same bits. g.Dense and g.Rows must have
// the shapes of Params and of the batch's rows; zero them for a plain sum.
func (m *Recommender) Gradient(params [][]float32, b RecBatch, g RecGrads) float64 {
	return m.GradientReady(params, b, g, nil)
}

// GradientReady is Gradient that calls ready(j) as soon as the gradient of
// dense parameter j is final, as Model.GradientReady (the first layer's
// first; every one once, also for an empty batch). The row gradients are
// final when it returns.
func (m *Recommender) GradientReady(params [][]float32, b RecBatch, g RecGrads, ready func(param int)) float64 {
	m.mustFit("Gradient", params, b)
	if err := m.checkGrads(b, g); err != nil {
		panic(fmt.Errorf("model: Recommender.Gradient: grads: %w", err))
	}
	if b.N == 0 {
		for j := range m.net.params {
			if ready != nil {
				ready(j)
			}
		}
		return 0
	}
	sc := m.net.takeScratch(b.N)
	defer m.net.putScratch(sc)
	mb := m.pool(b, sc)
	m.net.forward(params, mb, sc, nil)
	delta := sc.deltas[len(sc.deltas)-1][:b.N*m.spec.Outputs]
	lossSum, _ := m.net.head.score(sc.outs[len(m.net.shapes)-1], m.spec.Outputs, b.Y, delta)
	sc.inputGrad = grow(sc.inputGrad, len(mb.X))
	m.net.backward(params, mb, sc, g.Dense, progressOf(ready), sc.inputGrad)
	m.dotsBackward(b.N, mb.X, sc.inputGrad)
	m.scatter(b, sc.inputGrad, g.Rows)
	return lossSum
}

// Evaluate returns the sum of per-record losses and the number of correct
// predictions (argmax == label; always 0 for one output).
func (m *Recommender) Evaluate(params [][]float32, b RecBatch) (float64, int) {
	m.mustFit("Evaluate", params, b)
	if b.N == 0 {
		return 0, 0
	}
	sc := m.net.takeScratch(b.N)
	defer m.net.putScratch(sc)
	m.net.forward(params, m.pool(b, sc), sc, nil)
	return m.net.head.score(sc.outs[len(m.net.shapes)-1], m.spec.Outputs, b.Y, nil)
}

// mustFit panics on caller bugs, as network's: a trainer checks batches
// built from outside data with RecSpec.CheckBatch first.
func (m *Recommender) mustFit(op string, params [][]float32, b RecBatch) {
	if err := checkParams(m.net.params, params); err != nil {
		panic(fmt.Errorf("model: Recommender.%s: %w", op, err))
	}
	if err := m.spec.CheckBatch(b); err != nil {
		panic(fmt.Errorf("model: Recommender.%s: %w", op, err))
	}
}

func (m *Recommender) checkGrads(b RecBatch, g RecGrads) error {
	if err := checkParams(m.net.params, g.Dense); err != nil {
		return err
	}
	if len(g.Rows) != len(b.Fields) {
		return fmt.Errorf("%d row gradient slices for %d id fields: %w", len(g.Rows), len(b.Fields), ErrParamMismatch)
	}
	for i, f := range b.Fields {
		if len(g.Rows[i]) != len(f.Rows) {
			return fmt.Errorf("id field %q: %d row gradient values for %d row values: %w", m.tables[i].Field, len(g.Rows[i]), len(f.Rows), ErrParamMismatch)
		}
	}
	return nil
}

// pool writes the MLP's input into sc.input, one row per record: each
// field's weighted sum of its entries' rows (entry order), then the dense
// features, then the pairs' dot products, and returns it as the MLP's batch.
func (m *Recommender) pool(b RecBatch, sc *scratch) Batch {
	width := m.net.spec.Inputs
	sc.input = grow(sc.input, b.N*width)
	for r := range b.N {
		x := sc.input[r*width : (r+1)*width]
		for i, t := range m.tables {
			f := &b.Fields[i]
			out := x[m.cols[i] : m.cols[i]+t.Dim]
			clear(out)
			for e := f.Offsets[r]; e < f.Offsets[r+1]; e++ {
				u, w := int(f.Index[e]), f.weight(e)
				axpy(out, w, f.Rows[u*t.Dim:(u+1)*t.Dim])
			}
		}
		copy(x[m.dense:], b.Dense[r*m.spec.Inputs:(r+1)*m.spec.Inputs])
		for p, pr := range m.pairs {
			x[m.dots+p] = dot(m.pooled(x, pr[0]), m.pooled(x, pr[1]))
		}
	}
	return Batch{N: b.N, Inputs: width, X: sc.input, Y: b.Y}
}

// pooled is field i's pooled vector in x, one record's MLP input.
func (m *Recommender) pooled(x []float32, i int) []float32 {
	return x[m.cols[i] : m.cols[i]+m.tables[i].Dim]
}

// dotsBackward adds the dot products' share to the pooled vectors'
// gradients in dx (the MLP input's): d(a·b)/da = b and d(a·b)/db = a,
// times the product's gradient, pair after pair in Pairs' order, so the
// sums have one order whatever the threads.
func (m *Recommender) dotsBackward(n int, x, dx []float32) {
	if len(m.pairs) == 0 {
		return
	}
	width := m.net.spec.Inputs
	for r := range n {
		xr, dr := x[r*width:(r+1)*width], dx[r*width:(r+1)*width]
		for p, pr := range m.pairs {
			g := dr[m.dots+p]
			axpy(m.pooled(dr, pr[0]), g, m.pooled(xr, pr[1]))
			axpy(m.pooled(dr, pr[1]), g, m.pooled(xr, pr[0]))
		}
	}
}

// scatter adds each entry's share of its record's pooled-vector gradient
// (weight × dLoss/dpooled, taken from dx, the MLP input's gradient) into
// its row's gradient, record after record, entry after entry.
func (m *Recommender) scatter(b RecBatch, dx []float32, rows [][]float32) {
	width := m.net.spec.Inputs
	for i, t := range m.tables {
		f := &b.Fields[i]
		for r := range b.N {
			src := dx[r*width+m.cols[i] : r*width+m.cols[i]+t.Dim]
			for e := f.Offsets[r]; e < f.Offsets[r+1]; e++ {
				u, w := int(f.Index[e]), f.weight(e)
				axpy(rows[i][u*t.Dim:(u+1)*t.Dim], w, src)
			}
		}
	}
}

// dot is a·b summed in float64 in index order, rounded once: the same bits
// on every target (a product of two float32 values is exact in float64, so
// a fused multiply-add gives the same sum).
func dot(a, b []float32) float32 {
	b = b[:len(a)]
	var s float64
	for k, v := range a {
		s += float64(v) * float64(b[k])
	}
	return float32(s)
}

// axpy adds w·x into y. The product is rounded to float32 before the sum
// (the explicit conversion forbids a fused multiply-add), so the bits are
// the same on every CPU and compiler target.
func axpy(y []float32, w float32, x []float32) {
	y = y[:len(x)]
	for k, v := range x {
		y[k] += float32(w * v)
	}
}
