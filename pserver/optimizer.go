package pserver

import (
	"errors"
	"fmt"
	"math"
	"time"
)

// Optimizer kinds accepted in OptimizerConfig.Kind (the job spec's optimizer.kind).
const (
	OptimizerSGD      = "sgd"
	OptimizerMomentum = "momentum"
	OptimizerAdagrad  = "adagrad"
	OptimizerAdam     = "adam"
)

// Defaults applied by OptimizerConfig.WithDefaults; the usual literature values.
const (
	DefaultMomentum = 0.9
	DefaultBeta1    = 0.9
	DefaultBeta2    = 0.999
	DefaultEpsilon  = 1e-8
)

var (
	// ErrUnknownOptimizer is returned for a Kind that names no optimizer.
	ErrUnknownOptimizer = errors.New("unknown optimizer kind")
	// ErrOptimizerConfig is returned for an out-of-range hyper-parameter;
	// the wrapping message names the field.
	ErrOptimizerConfig = errors.New("invalid optimizer config")
)

// OptimizerConfig holds the hyper-parameters of every kind; fields a kind
// does not use are ignored (and not validated) for that kind.
type OptimizerConfig struct {
	Kind         string
	LearningRate float64
	Momentum     float64 // momentum
	Beta1, Beta2 float64 // adam
	Epsilon      float64 // adagrad, adam
}

// WithDefaults returns c with the zero hyper-parameters that c.Kind uses
// replaced by the Default* constants, for job specs that give only kind and
// learning_rate. A deliberate zero therefore cannot be expressed through it.
func (c OptimizerConfig) WithDefaults() OptimizerConfig {
	switch c.Kind {
	case OptimizerMomentum:
		c.Momentum = orDefault(c.Momentum, DefaultMomentum)
	case OptimizerAdagrad:
		c.Epsilon = orDefault(c.Epsilon, DefaultEpsilon)
	case OptimizerAdam:
		c.Beta1 = orDefault(c.Beta1, DefaultBeta1)
		c.Beta2 = orDefault(c.Beta2, DefaultBeta2)
		c.Epsilon = orDefault(c.Epsilon, DefaultEpsilon)
	}
	return c
}

func orDefault(v, def float64) float64 {
	if v == 0 {
		return def
	}
	return v
}

// Validate reports the first field of c that is out of range for c.Kind.
func (c OptimizerConfig) Validate() error {
	switch c.Kind {
	case OptimizerSGD, OptimizerMomentum, OptimizerAdagrad, OptimizerAdam:
	default:
		return fmt.Errorf("%w: Kind = %q, want one of %s, %s, %s, %s", ErrUnknownOptimizer,
			c.Kind, OptimizerSGD, OptimizerMomentum, OptimizerAdagrad, OptimizerAdam)
	}
	if !(c.LearningRate > 0) || math.IsInf(c.LearningRate, 0) {
		return fieldError("LearningRate", c.LearningRate, "a finite value > 0")
	}
	switch c.Kind {
	case OptimizerMomentum:
		if !(c.Momentum >= 0 && c.Momentum < 1) {
			return fieldError("Momentum", c.Momentum, "a value in [0, 1)")
		}
	case OptimizerAdagrad:
		if err := checkEpsilon(c.Epsilon); err != nil {
			return err
		}
	case OptimizerAdam:
		if !(c.Beta1 >= 0 && c.Beta1 < 1) {
			return fieldError("Beta1", c.Beta1, "a value in [0, 1)")
		}
		// Beta2 = 0 would make the bias correction 1-Beta2^t constant and v a
		// one-step estimate; allowed, as in the reference formulation.
		if !(c.Beta2 >= 0 && c.Beta2 < 1) {
			return fieldError("Beta2", c.Beta2, "a value in [0, 1)")
		}
		if err := checkEpsilon(c.Epsilon); err != nil {
			return err
		}
	}
	return nil
}

// checkEpsilon rejects a zero epsilon because a zero gradient history would
// then divide 0 by 0 and poison the parameter with NaN.
func checkEpsilon(eps float64) error {
	if !(eps > 0) || math.IsInf(eps, 0) {
		return fieldError("Epsilon", eps, "a finite value > 0")
	}
	return nil
}

func fieldError(field string, got float64, want string) error {
	return fmt.Errorf("%w: %s = %v, want %s", ErrOptimizerConfig, field, got, want)
}

// Optimizer updates one block of parameters elementwise, so updating the
// blocks of any partition gives bit-identical results to updating the whole.
// Implementations are stateless (all state is in slots) and safe for
// concurrent use on disjoint blocks.
type Optimizer interface {
	// Slots is the number of per-element state vectors Update needs:
	// sgd 0, momentum 1 (velocity), adagrad 1 (accumulator), adam 2 (m, v).
	Slots() int
	// Update applies one step to p using the (already averaged) gradient g;
	// len(g) and every len(slots[i]) must be at least len(p) (it panics
	// otherwise), and only the first len(p) elements are used. t is the
	// 1-based global step number, used by adam's bias correction; adam
	// panics on t < 1.
	Update(p, g []float32, slots [][]float32, t int64)
}

// NewOptimizer validates c as given (apply WithDefaults first for a sparse
// job spec) and returns its optimizer.
func NewOptimizer(c OptimizerConfig) (Optimizer, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	switch c.Kind {
	case OptimizerSGD:
		return sgd{lr: float32(c.LearningRate)}, nil
	case OptimizerMomentum:
		return momentum{lr: float32(c.LearningRate), mu: float32(c.Momentum)}, nil
	case OptimizerAdagrad:
		return adagrad{lr: float32(c.LearningRate), eps: float32(c.Epsilon)}, nil
	default: // OptimizerAdam; Validate admitted nothing else
		return adam{lr: c.LearningRate, beta1: c.Beta1, beta2: c.Beta2, eps: c.Epsilon}, nil
	}
}

// The loops below compute in float32, with float64 hyper-parameters converted
// once outside the loop. Reslicing every operand to len(p) up front lets the
// compiler drop the per-element bounds checks.
//
// Square roots are written float32(math.Sqrt(float64(x))): the Go compiler
// turns that pattern into a single-precision sqrt instruction, and the result
// is the correctly rounded float32 square root either way (a float64 sqrt of
// a float32 input rounds to float32 without double-rounding error).

type sgd struct{ lr float32 }

func (sgd) Slots() int { return 0 }

// Update: p -= lr*g.
func (o sgd) Update(p, g []float32, _ [][]float32, _ int64) {
	g = g[:len(p)]
	lr := o.lr
	for i := sgdVec(p, g, lr); i < len(p); i++ {
		p[i] -= lr * g[i]
	}
}

type momentum struct{ lr, mu float32 }

func (momentum) Slots() int { return 1 }

// Update: v = mu*v + g; p -= lr*v.
func (o momentum) Update(p, g []float32, slots [][]float32, _ int64) {
	g = g[:len(p)]
	v := slots[0][:len(p)]
	lr, mu := o.lr, o.mu
	for i := momentumVec(p, g, v, lr, mu); i < len(p); i++ {
		vi := mu*v[i] + g[i]
		v[i] = vi
		p[i] -= lr * vi
	}
}

type adagrad struct{ lr, eps float32 }

func (adagrad) Slots() int { return 1 }

// Update: a += g*g; p -= lr*g/(sqrt(a)+eps).
func (o adagrad) Update(p, g []float32, slots [][]float32, _ int64) {
	g = g[:len(p)]
	a := slots[0][:len(p)]
	lr, eps := o.lr, o.eps
	for i := adagradVec(p, g, a, lr, eps); i < len(p); i++ {
		gi := g[i]
		ai := a[i] + gi*gi
		a[i] = ai
		p[i] -= lr * gi / (float32(math.Sqrt(float64(ai))) + eps)
	}
}

// adam keeps float64 hyper-parameters because the per-step bias-corrected
// constants are derived from powers of the betas in float64.
type adam struct{ lr, beta1, beta2, eps float64 }

func (adam) Slots() int { return 2 }

// Update: m = b1*m + (1-b1)*g; v = b2*v + (1-b2)*g*g;
// p -= lr*mhat/(sqrt(vhat)+eps), with mhat = m/(1-b1^t), vhat = v/(1-b2^t),
// computed in the equivalent folded form p -= lrT*m/(sqrt(v)+epsT) where
// lrT = lr*sqrt(1-b2^t)/(1-b1^t) and epsT = eps*sqrt(1-b2^t).
func (o adam) Update(p, g []float32, slots [][]float32, t int64) {
	if t < 1 {
		panic(fmt.Sprintf("pserver: adam Update at step t = %d, want t >= 1", t))
	}
	g = g[:len(p)]
	m := slots[0][:len(p)]
	v := slots[1][:len(p)]
	c1 := 1 - math.Pow(o.beta1, float64(t))
	c2 := math.Sqrt(1 - math.Pow(o.beta2, float64(t)))
	lrT := float32(o.lr * c2 / c1)
	epsT := float32(o.eps * c2)
	b1, b2 := float32(o.beta1), float32(o.beta2)
	oneMinusB1, oneMinusB2 := float32(1-o.beta1), float32(1-o.beta2)
	for i := adamVec(p, g, m, v, b1, b2, oneMinusB1, oneMinusB2, lrT, epsT); i < len(p); i++ {
		gi := g[i]
		mi := b1*m[i] + oneMinusB1*gi
		vi := b2*v[i] + oneMinusB2*gi*gi
		m[i] = mi
		v[i] = vi
		p[i] -= lrT * mi / (float32(math.Sqrt(float64(vi))) + epsT)
	}
}

// MeasureOptimizer times iters updates of n parameters with the default
// hyper-parameters of kind (learning rate 0.01) and returns parameters
// updated per second. It is a benchmark helper and reads the wall clock.
func MeasureOptimizer(kind string, n, iters int) (paramsPerSec float64, err error) {
	if n < 1 || iters < 1 {
		return 0, fmt.Errorf("%w: MeasureOptimizer n = %d, iters = %d, both must be >= 1", ErrOptimizerConfig, n, iters)
	}
	opt, err := NewOptimizer(OptimizerConfig{Kind: kind, LearningRate: 0.01}.WithDefaults())
	if err != nil {
		return 0, err
	}
	p := make([]float32, n)
	g := make([]float32, n)
	for i := range g {
		g[i] = float32(i%7) * 1e-3
	}
	slots := make([][]float32, opt.Slots())
	for i := range slots {
		slots[i] = make([]float32, n)
	}
	opt.Update(p, g, slots, 1) // fault pages in before timing
	start := time.Now()
	for it := range iters {
		opt.Update(p, g, slots, int64(it)+2)
	}
	return float64(n) * float64(iters) / time.Since(start).Seconds(), nil
}

// MeasureMemBandwidth times iters Go copies of a bytes-sized buffer and
// returns bytes moved per second, counting both the read and the write.
func MeasureMemBandwidth(bytes, iters int) (bytesPerSec float64) {
	if bytes < 1 || iters < 1 {
		return 0
	}
	src := make([]byte, bytes)
	dst := make([]byte, bytes)
	for i := range src {
		src[i] = byte(i)
	}
	copy(dst, src) // fault pages in before timing
	start := time.Now()
	for range iters {
		copy(dst, src)
	}
	return 2 * float64(bytes) * float64(iters) / time.Since(start).Seconds()
}
