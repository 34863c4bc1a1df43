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
	// The frames a trainer sends during a gradient request sent ahead
	// (Request.Ahead), none with a payload: OpArrived names parameters now
	// written in the params file (Request.Arrived), OpGo says every one is
	// and the gradients may be written, OpStop that the rest will not come
	// and the request is to be answered Response.Stopped, nothing written.
	OpArrived = "arrived"
	OpGo      = "go"
	OpStop    = "stop"
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
	// Progress (declare, with Shm) offers progress frames: a program that
	// accepts (Response.Progress) may tell, during a gradient request,
	// which parameters' sums are final in the shared gradients before it
	// answers, so the trainer sends them to the pservers while the
	// program computes the rest (Response.Ready).
	Progress bool `json:"progress,omitempty"`
	// Overwrite (declare, with Shm) offers to leave the grads file as the
	// last gradient request left it: a program that accepts
	// (Response.Overwrite) writes every gradient value of each request,
	// zeros included, instead of adding into zeros, and the trainer
	// spares clearing it before each request.
	Overwrite bool `json:"overwrite,omitempty"`
	// Ahead (declare, with Progress and Overwrite) offers gradient
	// requests sent before their parameters are all back: a program that
	// accepts (Response.Ahead) reads no parameter of such a request
	// (Ahead set) before an OpArrived frame named it, and writes no
	// gradient before OpGo. The trainer sends the next micro-batch while
	// the pservers' answers to the last push are on their way.
	Ahead bool `json:"ahead,omitempty"`
	// Arrived (OpArrived) are parameters, indexes in declared order, that
	// the params file now holds for the request.
	Arrived []int `json:"arrived,omitempty"`
	// IDFields (declare) are the records' id fields: the tables a program
	// may declare. Tables (gradient, evaluate) are the batch's rows of
	// each declared table, in declared order, after the rest of the
	// payload (at VersionShm: the whole payload).
	IDFields []string    `json:"id_fields,omitempty"`
	Tables   []TableRows `json:"tables,omitempty"`
}

// Table is an embedding table a program declares: Name is a records' id
// field, Dim the rows' width, Optimizer (optional) the rows' update rule
// (sgd, adagrad or adam; the job's optimizer.kind when empty).
type Table struct {
	Name      string `json:"name"`
	Dim       int    `json:"dim"`
	Optimizer string `json:"optimizer,omitempty"`
}

// TableRows is one table's part of a batch request: Rows distinct rows
// of Dim values, and Entries (row, weight) entries over the N records.
// Its payload is, as 4-byte words: the distinct rows' ids (2 words each,
// uint64 little-endian), the records' offsets into the entries (N+1
// int32), each entry's row index (Entries int32), each entry's weight
// (Entries float32), then the rows' values (Rows×Dim float32, row-major).
// The answer to a gradient request carries, per table, the gradient sum of
// each distinct row (Rows×Dim float32) after the dense gradients.
type TableRows struct {
	Name    string `json:"name"`
	Dim     int    `json:"dim"`
	Rows    int    `json:"rows"`
	Entries int    `json:"entries"`
}

// RequestFloats is how many words the table's part of a request of n
// records holds; -1 when a count is negative or too large.
func (t TableRows) RequestFloats(n int) int {
	if t.Dim <= 0 || t.Rows < 0 || t.Entries < 0 || n < 0 || t.Rows > MaxPayload/4/(t.Dim+2) || t.Entries > MaxPayload/8 || n > MaxPayload/4 {
		return -1
	}
	return 2*t.Rows + n + 1 + 2*t.Entries + t.Rows*t.Dim
}

// GradFloats is how many floats the table's row gradients hold.
func (t TableRows) GradFloats() int { return t.Rows * t.Dim }

// PayloadFloats is how many floats follow the request header.
func (r *Request) PayloadFloats() (int, error) {
	switch r.Op {
	case OpDeclare, OpArrived, OpGo, OpStop:
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
	rows := 0
	for _, t := range r.Tables {
		f := t.RequestFloats(r.N)
		if f < 0 || rows+f > MaxPayload/4 {
			return 0, fmt.Errorf("table %q: bad counts (rows %d, entries %d, dim %d): %w", t.Name, t.Rows, t.Entries, t.Dim, ErrMalformed)
		}
		rows += f
	}
	if r.Batch != nil {
		return rows, nil // the rest is in shared memory
	}
	if n+rows > MaxPayload/4 {
		return 0, fmt.Errorf("%d floats: %w", n+rows, ErrMalformed)
	}
	return n + rows, nil
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
	// Tables (declare, optional) are the embedding tables the program
	// wants the rows of.
	Tables  []Table  `json:"tables,omitempty"`
	Count   *int64   `json:"count,omitempty"`
	LossSum *float64 `json:"loss_sum,omitempty"`
	Correct *int64   `json:"correct,omitempty"`
	// Progress (declare) accepts the trainer's offer of progress frames.
	Progress bool `json:"progress,omitempty"`
	// Overwrite (declare) accepts the trainer's offer to leave the grads
	// file uncleared (Request.Overwrite).
	Overwrite bool `json:"overwrite,omitempty"`
	// Ahead (declare) accepts the offer of requests sent ahead
	// (Request.Ahead).
	Ahead bool `json:"ahead,omitempty"`
	// Stopped answers a request sent ahead that OpStop stopped: nothing
	// else is set, no gradient was written.
	Stopped bool `json:"stopped,omitempty"`
	// Ready makes the frame a progress frame of a gradient request, not
	// its answer: the parameters (indexes in declared order) whose
	// gradient sums are final in the shared gradients; the program
	// writes them no more in this request. Nothing else is set, and no
	// payload follows. The answer comes after, as always.
	Ready []int `json:"ready,omitempty"`
	// Released, in a progress frame too, names parameters the program
	// reads no more in this request (its backward pass is past them): the
	// trainer may write the next step's values there before the answer.
	Released []int `json:"released,omitempty"`
	// Partial, in a progress frame too, are [parameter, n] pairs: the
	// parameter's first n gradient sums are final (n growing from frame
	// to frame, before the parameter is Ready): a weight's first rows
	// computed before its last. The trainer pushes them at once.
	Partial [][2]int `json:"partial,omitempty"`
	// Floats is how many floats follow; it must equal what the operation implies.
	Floats int `json:"floats"`
}

// IsProgress says whether r is a progress frame (Ready, Released) rather than an
// answer.
func (r *Response) IsProgress() bool {
	return (len(r.Ready) > 0 || len(r.Released) > 0 || len(r.Partial) > 0) && r.Error == "" && r.Count == nil && r.LossSum == nil && r.Correct == nil && !r.Stopped
}
