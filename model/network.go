package model

import (
	"fmt"
	"slices"
	"sync"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
)

// network is a stack of affine layers with ReLU between them and a loss head
// on top. linear and softmax are the single-layer cases; they differ from an
// mlp without hidden layers only in parameter names and initialisation.
type network struct {
	spec   Spec
	params []ParamSpec
	head   lossHead
	// scratch holds *gradScratch: Gradient's float64 copies of the
	// parameters and weight gradients, reused across calls (a trainer calls
	// it every step; they would be the bulk of its garbage).
	scratch sync.Pool
}

// gradScratch is one Gradient call's float64 buffers.
type gradScratch struct {
	params [][]float64 // the parameters, widened
	gw     [][]float64 // each layer's weight gradient
	input  []float64   // a layer's input, transposed (layer.affine)
}

func (n *network) takeScratch() *gradScratch {
	if sc, ok := n.scratch.Get().(*gradScratch); ok {
		return sc
	}
	sc := &gradScratch{params: make([][]float64, len(n.params)), gw: make([][]float64, len(n.params)/2)}
	for j, p := range n.params {
		sc.params[j] = make([]float64, p.Size())
		if j%2 == 0 {
			sc.gw[j/2] = make([]float64, p.Size())
		}
	}
	return sc
}

var _ Model = (*network)(nil)

func newNetwork(s Spec) *network {
	s.Hidden = slices.Clone(s.Hidden)
	sizes := s.layerSizes()
	params := make([]ParamSpec, 0, 2*(len(sizes)-1))
	for l := range len(sizes) - 1 {
		w, b := paramNames(s.Kind, l)
		params = append(params,
			ParamSpec{Name: w, Shape: []int{sizes[l], sizes[l+1]}},
			ParamSpec{Name: b, Shape: []int{sizes[l+1]}})
	}
	var head lossHead = squaredError{}
	if s.isClassifier() {
		head = crossEntropy{}
	}
	return &network{spec: s, params: params, head: head}
}

func (n *network) Spec() Spec {
	s := n.spec
	s.Hidden = slices.Clone(s.Hidden)
	return s
}

func (n *network) Params() []ParamSpec {
	ps := make([]ParamSpec, len(n.params))
	for j, p := range n.params {
		ps[j] = ParamSpec{Name: p.Name, Shape: slices.Clone(p.Shape)}
	}
	return ps
}

func (n *network) Init(seed uint64, params [][]float32) {
	if err := checkParams(n.params, params); err != nil {
		panic(fmt.Errorf("model: Init: %w", err))
	}
	for j, p := range n.params {
		fillUniform(seed, j, 0, initLimit(n.spec, p), params[j])
	}
}

func (n *network) Gradient(params [][]float32, b Batch, grads [][]float32) float64 {
	n.mustFit("Gradient", params, b)
	if err := checkParams(n.params, grads); err != nil {
		panic(fmt.Errorf("model: Gradient: grads: %w", err))
	}
	if b.N == 0 {
		return 0
	}
	sc := n.takeScratch()
	defer n.scratch.Put(sc)
	for j, p := range params {
		widenInto(sc.params[j], p)
	}
	layers := layersFrom(n.params, sc.params)
	inputs, z := forward(layers, batchMatrix(b), &sc.input)
	delta := mat.NewDense(b.N, n.spec.Outputs, nil)
	lossSum, _ := n.head.score(z, b.Y, delta)
	backward(layers, inputs, delta, grads, sc.gw)
	return lossSum
}

func (n *network) Evaluate(params [][]float32, b Batch) (float64, int) {
	n.mustFit("Evaluate", params, b)
	if b.N == 0 {
		return 0, 0
	}
	return n.evaluate64(widenAll(params), b)
}

// evaluate64 is Evaluate on float64 parameters; b must be non-empty and checked.
func (n *network) evaluate64(params [][]float64, b Batch) (float64, int) {
	_, z := forward(layersFrom(n.params, params), batchMatrix(b), nil)
	return n.head.score(z, b.Y, nil)
}

// mustFit panics on caller bugs: the signatures fixed by Model have no error.
func (n *network) mustFit(op string, params [][]float32, b Batch) {
	if err := checkParams(n.params, params); err != nil {
		panic(fmt.Errorf("model: %s: %w", op, err))
	}
	if err := n.spec.CheckBatch(b); err != nil {
		panic(fmt.Errorf("model: %s: %w", op, err))
	}
}

// forward returns the input of every layer (the batch, then each hidden
// activation) and the output layer's pre-activation; buf (may be nil) is
// scratch memory it may grow.
func forward(layers []layer, x *mat.Dense, buf *[]float64) (inputs []*mat.Dense, out *mat.Dense) {
	inputs = make([]*mat.Dense, len(layers))
	a := x
	for l, ly := range layers {
		inputs[l] = a
		out = ly.affine(a, buf)
		if l < len(layers)-1 {
			a = relu(out)
		}
	}
	return inputs, out
}

// backward propagates delta = dLoss/d(output pre-activation) down the layers
// and adds each layer's weight and bias gradients into grads; gwBuf holds
// each layer's weight gradient (overwritten).
func backward(layers []layer, inputs []*mat.Dense, delta *mat.Dense, grads [][]float32, gwBuf [][]float64) {
	for l := len(layers) - 1; l >= 0; l-- {
		ly := layers[l]
		fanIn, fanOut := ly.w.Dims()
		weightGradient(grads[2*l], gwBuf[l], inputs[l], delta, fanIn, fanOut)
		addInto(grads[2*l+1], columnSums(delta))
		if l == 0 {
			break
		}
		rows, _ := delta.Dims()
		below := mat.NewDense(rows, fanIn, nil)
		below.Mul(delta, ly.w.T())
		maskInactive(below, inputs[l])
		delta = below
	}
}

// weightGradient adds inputᵀ·delta (fanIn × fanOut) into grad, computed
// in buf. A narrow layer computes its transpose deltaᵀ·input (the same
// products summed in the same order over the records; see narrow for
// non-finite values) in
// column bands small enough for gonum to multiply without goroutines.
func weightGradient(grad []float32, buf []float64, input, delta *mat.Dense, fanIn, fanOut int) {
	rows, _ := delta.Dims()
	weightGradientAs(grad, buf, input, delta, fanIn, fanOut, narrow(fanOut, rows))
}

// weightGradientAs is weightGradient, computed transposed or not.
func weightGradientAs(grad []float32, buf []float64, input, delta *mat.Dense, fanIn, fanOut int, transposed bool) {
	rows, _ := delta.Dims()
	if !transposed {
		gw := mat.NewDense(fanIn, fanOut, buf)
		gw.Mul(input.T(), delta)
		addInto(grad, gw.RawMatrix().Data)
		return
	}
	gwt := mat.NewDense(fanOut, fanIn, buf)
	for c := 0; c < fanIn; c += serialColumns {
		end := min(c+serialColumns, fanIn)
		band := gwt.Slice(0, fanOut, c, end).(*mat.Dense)
		band.Mul(delta.T(), input.Slice(0, rows, c, end))
	}
	for i := range fanIn {
		for j := range fanOut {
			grad[i*fanOut+j] += float32(buf[j*fanIn+i])
		}
	}
}

// serialColumns is a column band gonum multiplies serially when the other
// side is at most 64 wide (it goes parallel from 4 blocks of 64×64).
const serialColumns = 3 * 64

func columnSums(m *mat.Dense) []float64 {
	rows, cols := m.Dims()
	sums := make([]float64, cols)
	for r := range rows {
		floats.Add(sums, m.RawRowView(r))
	}
	return sums
}

func relu(z *mat.Dense) *mat.Dense {
	rows, cols := z.Dims()
	a := mat.NewDense(rows, cols, nil)
	for r := range rows {
		dst := a.RawRowView(r)
		for k, v := range z.RawRowView(r) {
			dst[k] = max(v, 0)
		}
	}
	return a
}

// maskInactive zeroes the gradient of units whose ReLU output was 0 (the
// derivative at exactly 0 is taken as 0).
func maskInactive(grad, activation *mat.Dense) {
	rows, _ := grad.Dims()
	for r := range rows {
		g := grad.RawRowView(r)
		for k, a := range activation.RawRowView(r) {
			if a <= 0 {
				g[k] = 0
			}
		}
	}
}
