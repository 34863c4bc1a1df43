package model

import (
	"fmt"
	"slices"
	"sync"

	"gonum.org/v1/gonum/blas"
)

// network is a stack of affine layers with ReLU between them and a loss head
// on top. linear and softmax are the single-layer cases; they differ from an
// mlp without hidden layers only in parameter names and initialisation.
//
// Everything is float32, as the parameters are stored and sent: the
// products go to a BLAS sgemm (gemm.go), cut into fixed tiles shared out
// over threads, so that the values do not depend on the thread count.
type network struct {
	spec   Spec
	params []ParamSpec
	shapes []layerShape
	head   lossHead
	th     threads
	// free holds scratch buffers between calls (a trainer calls Gradient
	// every micro-batch; they would be the bulk of its garbage). Not a
	// sync.Pool: that drops its contents at garbage collections, and these
	// are megabytes to allocate and fault in again.
	mu   sync.Mutex
	free []*scratch
}

// scratch is one Gradient or Evaluate call's buffers, grown to the largest
// batch seen.
type scratch struct {
	outs   [][]float32 // each layer's output: ReLU'd for hidden layers, the logits for the last
	deltas [][]float32 // each layer's dLoss/d(pre-activation), all kept: backward says why
	// The recommender's (recommender.go): its MLP's input (pooled rows and
	// dense features) and that input's gradient.
	input, inputGrad []float32
}

// Options tunes how a model computes, not what: the values are the same
// for every Options.
type Options struct {
	// Threads computes each product on this many threads; 0 means
	// GOMAXPROCS at the time of the call.
	Threads int
	// Pin, when not nil, is called by each goroutine that computes a
	// threaded product's tiles before it takes one, and what it returns
	// when it has taken the last: a trainer given CPUs of its own pins the
	// goroutine's thread to them (internal/cpuaffinity). Where a tile is
	// computed never changes its value.
	Pin func() (unpin func())
	// impl replaces the build's kernels (tests compare gonum's pure-Go
	// ones with the fast ones).
	impl sgemm
}

var _ Model = (*network)(nil)

func newNetwork(s Spec, o Options) *network {
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
	th := threads{n: o.Threads, impl: fastGemm, pin: o.Pin}
	if o.impl != nil {
		th.impl = o.impl
	}
	return &network{spec: s, params: params, shapes: layerShapes(params), head: head, th: th}
}

func (n *network) takeScratch(rows int) *scratch {
	var sc *scratch
	n.mu.Lock()
	if k := len(n.free); k > 0 {
		sc, n.free = n.free[k-1], n.free[:k-1]
	}
	n.mu.Unlock()
	if sc == nil {
		sc = &scratch{outs: make([][]float32, len(n.shapes)), deltas: make([][]float32, len(n.shapes))}
	}
	for l, sh := range n.shapes {
		sc.outs[l] = grow(sc.outs[l], rows*sh.fanOut)
		sc.deltas[l] = grow(sc.deltas[l], rows*sh.fanOut)
	}
	return sc
}

func (n *network) putScratch(sc *scratch) {
	n.mu.Lock()
	n.free = append(n.free, sc)
	n.mu.Unlock()
}

// grow returns s with length n, reallocating only when it is too small.
func grow(s []float32, n int) []float32 {
	if cap(s) < n {
		return make([]float32, n)
	}
	return s[:n]
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
	return n.GradientReady(params, b, grads, nil)
}

func (n *network) GradientReady(params [][]float32, b Batch, grads [][]float32, ready func(param int)) float64 {
	return n.GradientProgress(params, b, grads, progressOf(ready))
}

func (n *network) GradientProgress(params [][]float32, b Batch, grads [][]float32, p *Progress) float64 {
	n.mustFit("Gradient", params, b)
	if err := checkParams(n.params, grads); err != nil {
		panic(fmt.Errorf("model: Gradient: grads: %w", err))
	}
	if b.N == 0 {
		if p.overwrite() {
			for _, g := range grads {
				clear(g)
			}
		}
		p.Finish(len(n.params))
		return 0
	}
	sc := n.takeScratch(b.N)
	defer n.putScratch(sc)
	if !n.forward(params, b, sc, p) || !p.await(-1) {
		return 0
	}
	last := len(n.shapes) - 1
	lossSum, _ := n.head.score(sc.outs[last], n.spec.Outputs, b.Y, sc.deltas[last])
	n.backward(params, b, sc, grads, p, nil)
	return lossSum
}

func (n *network) Evaluate(params [][]float32, b Batch) (float64, int) {
	n.mustFit("Evaluate", params, b)
	if b.N == 0 {
		return 0, 0
	}
	sc := n.takeScratch(b.N)
	defer n.putScratch(sc)
	n.forward(params, b, sc, nil)
	return n.head.score(sc.outs[len(n.shapes)-1], n.spec.Outputs, b.Y, nil)
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

// forward fills sc.outs: out_l = in_l·W_l + b_l (the bias first, the
// product added onto it), ReLU'd below the last layer. It waits for each
// layer's parameters (Progress.Await) before it reads them, and returns
// false, having stopped, if one will not come.
func (n *network) forward(params [][]float32, b Batch, sc *scratch, p *Progress) bool {
	in := b.X
	for l, sh := range n.shapes {
		if !p.await(2*l) || !p.await(2*l+1) {
			return false
		}
		out := sc.outs[l]
		setRows(out, b.N, params[2*l+1])
		n.th.mul(blas.NoTrans, blas.NoTrans, b.N, sh.fanOut, sh.fanIn, in, sh.fanIn, params[2*l], sh.fanOut, 1, out, sh.fanOut)
		if l < len(n.shapes)-1 {
			reluInPlace(out)
		}
		in = out
	}
	return true
}

// backward propagates sc.deltas[last] = dLoss/d(output pre-activation)
// down the layers and adds each layer's weight (inᵀ·delta) and bias
// (column sums of delta) gradients into grads, announcing each to p once
// final. When inGrad is not nil it also sets inGrad (b.N × b.Inputs) to
// dLoss/dX, the gradient of the inputs themselves (the recommender's
// pooled rows).
//
// It computes every layer's delta first, top down, and the weight
// gradients after, the first layer's first: the order in which the next
// forward pass reads the parameters. The pservers holding the lower layers
// then receive their last gradient before the backward pass ends, apply
// the step and send their parameters back while the upper layers' weight
// gradients compute, and a trainer can start the next micro-batch's first
// layer while the last pserver's answer is on its way (trainer/early.go).
// Each product is the same call on the same inputs as in any other order:
// the bits do not depend on it.
func (n *network) backward(params [][]float32, b Batch, sc *scratch, grads [][]float32, p *Progress, inGrad []float32) {
	// The biases are read by the forward pass only, as is the first
	// weight unless the inputs' gradient is asked for.
	for l := range n.shapes {
		p.released(2*l + 1)
	}
	if inGrad == nil {
		p.released(0)
	}
	for l := len(n.shapes) - 1; l > 0; l-- {
		sh := n.shapes[l]
		below := sc.deltas[l-1][:b.N*sh.fanIn]
		n.th.mul(blas.NoTrans, blas.Trans, b.N, sh.fanIn, sh.fanOut, sc.deltas[l], sh.fanOut, params[2*l], sh.fanOut, 0, below, sh.fanIn)
		p.released(2 * l)
		maskInactive(below, sc.outs[l-1])
	}
	if inGrad != nil {
		sh := n.shapes[0]
		n.th.mul(blas.NoTrans, blas.Trans, b.N, sh.fanIn, sh.fanOut, sc.deltas[0], sh.fanOut, params[0], sh.fanOut, 0, inGrad, sh.fanIn)
		p.released(0)
	}
	beta := float32(1) // add into grads
	if p.overwrite() {
		beta = 0 // BLAS zeroes each tile of C before adding into it: the bits of adding into zeros
	}
	for l, sh := range n.shapes {
		in := b.X
		if l > 0 {
			in = sc.outs[l-1]
		}
		delta := sc.deltas[l][:b.N*sh.fanOut]
		n.th.mulRows(blas.Trans, blas.NoTrans, sh.fanIn, sh.fanOut, b.N, in, sh.fanIn, delta, sh.fanOut, beta, grads[2*l], sh.fanOut,
			rowsFinal{p: p, param: 2 * l, width: sh.fanOut})
		if beta == 0 {
			clear(grads[2*l+1])
		}
		addColumnSums(grads[2*l+1], delta, b.N)
		p.ready(2 * l)
		p.ready(2*l + 1)
	}
}
