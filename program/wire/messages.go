package wire

import (
	"fmt"
	"math"
)

// Version is the protocol version a declare request carries; a program
// answers with the same number or fails. Every program understands it: the
// frames carry all tensors in their payload.
const Version = 1

// VersionShm is the version a trainer offers in a declare request
// (Request.Offer, with the descriptors in Request.Shm): parameters, records
// and gradients travel through shared memory, and the frames carry headers
// only. A program accepts by answering it as its version; one written for
// Version ignores the offer, answers Version, and the pipe is used.
const VersionShm = 2

// Operations of a request.
const (
	OpDeclare  = "declare"
	OpGradient = "gradient"
	OpEvaluate = "evaluate"
)

// Label encodings of a VersionShm batch (ShmBatch.Labels).
const (
	LabelsInt32   = "int32"   // class indices of a classifier (outputs > 1)
	LabelsFloat32 = "float32" // regression targets
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

// ShmOffer names the shared-memory files a program inherits: descriptor
// numbers in the program's process. Params holds the parameters (read-only
// for the program), Records a batch's records (read-only), Grads the
// gradient sums the program adds in place.
type ShmOffer struct {
	Params  int `json:"params_fd"`
	Records int `json:"records_fd"`
	Grads   int `json:"grads_fd"`
}

// ShmBatch says where a VersionShm request's tensors lie. The parameters are
// at the start of the params file, the gradients at the start of the grads
// file, both in declared order without padding; X (N×Inputs float32) is at
// byte X of the records file and Y (N labels, encoded as Labels says) at
// byte Y. RecordsSize is the records file's size: a program whose mapping
// is smaller maps it again.
type ShmBatch struct {
	RecordsSize int64  `json:"records_size"`
	X           int64  `json:"x"`
	Y           int64  `json:"y"`
	Labels      string `json:"labels"`
}

// Request is the header of every request. Declare uses Version, Seed,
// Inputs, Outputs, Hidden, Threads and, to offer shared memory, Offer and
// Shm; it has no payload. Gradient and Evaluate carry N records: at
// Version the payload is X (N×Inputs, row-major), then Y (N labels), then
// every parameter of Params in order; at VersionShm Batch says where they
// are in shared memory and there is no payload. Step and Seed (VersionShm)
// are the request's step number and a seed for its randomness (dropout,
// augmentation): the same for a micro-batch whichever trainer computes it.
type Request struct {
	Op      string    `json:"op"`
	Version int       `json:"version,omitempty"`
	Offer   int       `json:"offer,omitempty"`
	Shm     *ShmOffer `json:"shm,omitempty"`
	Threads int       `json:"threads,omitempty"`
	Seed    uint64    `json:"seed,omitempty"`
	Inputs  int       `json:"inputs"`
	Outputs int       `json:"outputs,omitempty"`
	Hidden  []int     `json:"hidden,omitempty"`
	N       int       `json:"n,omitempty"`
	Params  []Tensor  `json:"params,omitempty"`
	Step    int64     `json:"step,omitempty"`
	Batch   *ShmBatch `json:"batch,omitempty"`
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
	if r.Batch != nil {
		return 0, nil // everything is in shared memory
	}
	return n, nil
}

// Response is the header of every answer. Error set means the request
// failed (the payload is then empty). Declare answers Version and Params,
// with the initial values of every parameter as payload. Gradient answers
// Count and LossSum with the gradient sums of every parameter as payload
// (at VersionShm: added into the grads file, no payload). Evaluate answers
// Count, LossSum and Correct with no payload. A declare answer may say
// Device, where the program computes ("cpu", "cuda:0 (NAME)"): the role
// logs it.
type Response struct {
	Error   string   `json:"error,omitempty"`
	Version int      `json:"version,omitempty"`
	Params  []Tensor `json:"params,omitempty"`
	Device  string   `json:"device,omitempty"`
	Count   *int64   `json:"count,omitempty"`
	LossSum *float64 `json:"loss_sum,omitempty"`
	Correct *int64   `json:"correct,omitempty"`
	// Floats is how many floats follow; it must equal what the operation implies.
	Floats int `json:"floats"`
}
