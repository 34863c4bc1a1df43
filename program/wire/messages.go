package wire

import (
	"fmt"
	"math"
)

// Version is the protocol version a declare request carries; a program
// answers with the same number or fails.
const Version = 1

// Operations of a request.
const (
	OpDeclare  = "declare"
	OpGradient = "gradient"
	OpEvaluate = "evaluate"
)

// Tensor names one parameter and its row-major shape.
type Tensor struct {
	Name  string `json:"name"`
	Shape []int  `json:"shape"`
}

// Size is the number of elements of t (0 for a malformed shape).
func (t Tensor) Size() int {
	n := 1
	for _, d := range t.Shape {
		if d <= 0 || n > math.MaxInt32/d {
			return 0
		}
		n *= d
	}
	return n
}

// Request is the header of every request. Declare uses Version, Seed,
// Inputs, Outputs, Hidden and has no payload. Gradient and Evaluate carry N
// records: the payload is X (N×Inputs, row-major), then Y (N labels), then
// every parameter of Params in order.
type Request struct {
	Op      string   `json:"op"`
	Version int      `json:"version,omitempty"`
	Seed    uint64   `json:"seed,omitempty"`
	Inputs  int      `json:"inputs"`
	Outputs int      `json:"outputs,omitempty"`
	Hidden  []int    `json:"hidden,omitempty"`
	N       int      `json:"n,omitempty"`
	Params  []Tensor `json:"params,omitempty"`
}

// PayloadFloats is how many floats follow the request header.
func (r *Request) PayloadFloats() (int, error) {
	switch r.Op {
	case OpDeclare:
		return 0, nil
	case OpGradient, OpEvaluate:
	default:
		return 0, fmt.Errorf("unknown op %q: %w", r.Op, ErrMalformed)
	}
	if r.N < 0 || r.Inputs < 0 || (r.Inputs > 0 && r.N > MaxPayload/4/r.Inputs) {
		return 0, fmt.Errorf("n=%d inputs=%d: %w", r.N, r.Inputs, ErrMalformed)
	}
	n := r.N*r.Inputs + r.N
	for _, p := range r.Params {
		s := p.Size()
		if s == 0 {
			return 0, fmt.Errorf("param %q: bad shape %v: %w", p.Name, p.Shape, ErrMalformed)
		}
		n += s
	}
	return n, nil
}

// Response is the header of every answer. Error set means the request
// failed (the payload is then empty). Declare answers Version and Params,
// with the initial values of every parameter as payload. Gradient answers
// Count and LossSum with the gradient sums of every parameter as payload.
// Evaluate answers Count, LossSum and Correct with no payload.
type Response struct {
	Error   string   `json:"error,omitempty"`
	Version int      `json:"version,omitempty"`
	Params  []Tensor `json:"params,omitempty"`
	Count   *int64   `json:"count,omitempty"`
	LossSum *float64 `json:"loss_sum,omitempty"`
	Correct *int64   `json:"correct,omitempty"`
	// Floats is how many floats follow; it must equal what the operation implies.
	Floats int `json:"floats"`
}
