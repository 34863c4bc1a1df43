package gtrainprog

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"

	"github.com/gtrain/gtrain/program/wire"
)

// Param is one declared parameter: its name (a file name in the model
// directory: [A-Za-z0-9_.-]), row-major shape and initial values.
type Param struct {
	Name  string
	Shape []int
	Init  []float32
}

// Config is what gtrain tells the program about the model: the job spec's
// seed, model.inputs, model.outputs and model.hidden. Seed is for the
// initial values; a gradient request's own randomness comes from Batch.Seed.
type Config struct {
	Seed    uint64
	Inputs  int
	Outputs int
	Hidden  []int
	// Threads is how many threads the model may compute on (the trainer's
	// cpu); fixing it keeps the answers independent of the machine.
	Threads int
}

// Batch is N records: X row-major (N×Inputs), Y one label each. For a
// classifier (Config.Outputs > 1), Labels holds the class indices (Y the
// same as float32), through shared memory and the pipe alike. X, Y and
// Labels are read-only.
type Batch struct {
	N, Inputs int
	X, Y      []float32
	Labels    []int32
	// Step and Seed are a gradient request's step number (the sync step of
	// the micro-batch, 0 in async jobs) and the seed of its randomness
	// (dropout, augmentation): both depend only on the job's seed and the
	// micro-batch, never on the trainer that computes it, so a model that
	// draws its randomness from Seed alone gives the same gradient when a
	// micro-batch is recomputed. The trainer sends them only through shared
	// memory (protocol version 2): over the pipe (version 1), and in every
	// evaluate request, both are 0.
	Step int64
	Seed uint64
}

// Model is a user's model. Declare must be deterministic for a Config: every
// gtrain process that starts the program asks again and compares.
type Model interface {
	Declare(c Config) ([]Param, error)
	// Gradient adds to grads (zeroed, shaped as declared) the sum over the
	// batch of the gradient of each record's loss, and returns the loss sum.
	// params are read-only (through shared memory, a write faults).
	Gradient(params [][]float32, b Batch, grads [][]float32) (lossSum float64, err error)
	// Evaluate returns the loss sum and the number of correct predictions.
	Evaluate(params [][]float32, b Batch) (lossSum float64, correct int, err error)
}

// Serve answers gtrain's requests on stdin and stdout until stdin ends.
func Serve(m Model) error {
	out := bufio.NewWriter(os.Stdout)
	return ServeStreams(m, bufio.NewReader(os.Stdin), out, func() error { return out.Flush() })
}

// ServeStreams is Serve on any streams; flush is called after every answer.
// An error a Model method returns is sent as an error answer (the job fails
// with its text); a broken stream ends the loop with an error.
func ServeStreams(m Model, r io.Reader, w io.Writer, flush func() error) error {
	sh := &shared{}
	for {
		var req wire.Request
		data, err := wire.ReadFrame(r, &req, req.PayloadFloats)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("gtrainprog: read request: %w", err)
		}
		header, payload, err := handleRecovered(m, sh, &req, data)
		if err != nil {
			header, payload = &wire.Response{Error: err.Error()}, nil
		}
		if err := writeAnswer(w, header, payload); err != nil {
			return err
		}
		if err := flush(); err != nil {
			return fmt.Errorf("gtrainprog: write answer: %w", err)
		}
	}
}

// handleRecovered is handle, a panic in the model answered as an error
// (the job fails with its text; the stack goes to stderr) rather than
// killing the program: a dead program is a crash, which gtrain restarts
// against the crash budget, meeting the same bug each time.
func handleRecovered(m Model, sh *shared, req *wire.Request, data []float32) (h *wire.Response, payload [][]float32, err error) {
	defer func() {
		if p := recover(); p != nil {
			fmt.Fprintf(os.Stderr, "gtrainprog: panic in the model's %s: %v\n%s", req.Op, p, debug.Stack())
			h, payload, err = nil, nil, fmt.Errorf("panic in the model's %s: %v", req.Op, p)
		}
	}()
	return handle(m, sh, req, data)
}

func writeAnswer(w io.Writer, h *wire.Response, payload [][]float32) error {
	for _, p := range payload {
		h.Floats += len(p)
	}
	if err := wire.WriteFrame(w, h, payload...); err != nil {
		return fmt.Errorf("gtrainprog: write answer: %w", err)
	}
	return nil
}
