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
	// gradient of parameter j is final in grads (the last layer's first),
	// so that the caller may send it while the lower layers compute. Every
	// parameter is announced exactly once, also for an empty batch. An
	// announced parameter may still be read until GradientReady returns:
	// the caller must not change params before.
	GradientReady(params [][]float32, b Batch, grads [][]float32, ready func(param int)) (lossSum float64)
	// Evaluate returns the sum of per-record losses and the number of
	// correct predictions (argmax == label; always 0 for regression).
	Evaluate(params [][]float32, b Batch) (lossSum float64, correct int)
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
