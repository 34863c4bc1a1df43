package model

import "fmt"

// Model is a built-in model. Implementations hold no mutable state, so one
// Model may be used from many goroutines at once.
type Model interface {
	Spec() Spec
	// Params lists the parameter tensors in a fixed order.
	Params() []ParamSpec
	// Init fills params (allocated by the caller, one slice per ParamSpec,
	// len Size()) deterministically from seed. Element i of param j depends
	// only on (seed, j, i), so any partition of the parameters computes the
	// same values (see InitRange).
	Init(seed uint64, params [][]float32)
	// Gradient adds to grads (one slice per param) the sum over the batch of
	// d(loss_r)/d(theta) and returns the sum of per-record losses. Sums, not
	// means: the caller weights by record counts.
	Gradient(params [][]float32, b Batch, grads [][]float32) (lossSum float64)
	// GradientReady is Gradient that calls ready(j) as soon as the
	// gradient of parameter j is final in grads, so that the caller may
	// send it while the others compute (Progress.Ready: in which order). Every
	// parameter is announced exactly once, also for an empty batch. An
	// announced parameter may still be read until GradientReady returns:
	// the caller must not change params before.
	GradientReady(params [][]float32, b Batch, grads [][]float32, ready func(param int)) (lossSum float64)
	// GradientProgress is GradientReady telling p more as it computes
	// (Progress): a push can send a gradient's first rows before its last
	// ones are computed, and a pull can write a parameter the backward
	// pass reads no more.
	GradientProgress(params [][]float32, b Batch, grads [][]float32, p *Progress) (lossSum float64)
	// Evaluate returns the sum of per-record losses and the number of
	// correct predictions (argmax == label; always 0 for regression).
	Evaluate(params [][]float32, b Batch) (lossSum float64, correct int)
}

// Progress follows a gradient's computation; a nil func is not called.
// The calls come from the computing goroutines, one at a time for a
// parameter but not in any one goroutine.
type Progress struct {
	// Ready(j): grads[j] is final (GradientReady's ready: every parameter
	// once, also for an empty batch). mlp, softmax and linear tell a
	// layer's weight and bias in the order the forward pass reads them,
	// the first layer's first (network.backward says why).
	Ready func(param int)
	// Partial(j, n): grads[j][:n] is final, before Ready(j), with n
	// growing (a weight's gradient comes in bands of rows). Not every
	// parameter is told in parts.
	Partial func(param, n int)
	// Released(j): the computation reads params[j] no more (every
	// parameter once, before the computation returns): the next step's
	// values may be written there while the rest computes.
	Released func(param int)
	// Overwrite: grads hold nothing to add to (a trainer's last micro-batch,
	// say): the computation writes each gradient instead of adding into
	// it, with the same bits as adding into zeros, and spares the caller a
	// pass clearing the whole model before the forward pass. A nil
	// Progress adds.
	Overwrite bool
	// Await(j), when set, is called before the forward pass first reads
	// params[j], and returns once the caller has written them: a trainer
	// starts the next micro-batch while the last pservers' parameters are
	// still on their way. It is called once more with j = -1 after the
	// forward pass, before the first gradient is written, to ask whether
	// the computation is still wanted (it returns at once). False stops
	// the computation there, before it writes any gradient, and sets
	// Stopped; its loss is then meaningless. Only mlp, softmax and linear
	// call it.
	Await func(param int) bool
	// Stopped: an Await returned false (set by the computation).
	Stopped bool
}

// await is Await(j), true when there is none.
func (p *Progress) await(j int) bool {
	if p == nil || p.Await == nil || p.Await(j) {
		return true
	}
	p.Stopped = true
	return false
}

func (p *Progress) overwrite() bool { return p != nil && p.Overwrite }

func (p *Progress) ready(j int) {
	if p != nil && p.Ready != nil {
		p.Ready(j)
	}
}

func (p *Progress) released(j int) {
	if p != nil && p.Released != nil {
		p.Released(j)
	}
}

// Finish tells each of the first params parameters ready and released:
// what a computation that had nothing to compute in parts (an empty batch,
// a program's whole answer) tells at its end. A nil Progress hears nothing.
func (p *Progress) Finish(params int) {
	for j := range params {
		p.ready(j)
		p.released(j)
	}
}

// progressOf is the Progress of GradientReady's ready (nil for nil).
func progressOf(ready func(int)) *Progress {
	if ready == nil {
		return nil
	}
	return &Progress{Ready: ready}
}

// New builds the model described by s.
func New(s Spec) (Model, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	return newNetwork(s, Options{}), nil
}

// paramNames returns the names of the weight and bias of each layer:
// "w","b" for the single-layer kinds, "w0","b0","w1","b1",... for mlp.
func paramNames(kind string, layer int) (weight, bias string) {
	if kind != KindMLP {
		return "w", "b"
	}
	return fmt.Sprintf("w%d", layer), fmt.Sprintf("b%d", layer)
}

// NewWith builds the model described by s, computing as o says.
func NewWith(s Spec, o Options) (Model, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	return newNetwork(s, o), nil
}
