package gtrainprog

import (
	"fmt"

	"golang.org/x/sys/unix"

	"github.com/gtrain/gtrain/program/wire"
)

// handle answers one request. Through shared memory (sh set, accepted at
// declare) the model reads its parameters and records in place and adds
// into the gradient buffers the trainer zeroed; the answer has no payload.
func handle(m Model, sh *shared, req *wire.Request, data []float32) (*wire.Response, [][]float32, error) {
	if req.Op == wire.OpDeclare {
		return declare(m, sh, req)
	}
	var params, grads [][]float32
	var b Batch
	if req.Batch != nil && sh.offer != nil {
		var err error
		if params, b, grads, err = sh.batch(req); err != nil {
			return nil, nil, err
		}
	} else {
		params, b = splitBatch(req, data, sh.classes)
	}
	b.Step, b.Seed = req.Step, req.Seed
	switch req.Op {
	case wire.OpGradient:
		shared := grads != nil
		if !shared {
			grads = make([][]float32, len(params))
			for j, p := range params {
				grads[j] = make([]float32, len(p))
			}
		}
		loss, err := m.Gradient(params, b, grads)
		if err != nil {
			return nil, nil, err
		}
		count := int64(b.N)
		if shared {
			grads = nil // the sums are in place
		}
		return &wire.Response{Count: &count, LossSum: &loss}, grads, nil
	case wire.OpEvaluate:
		loss, correct, err := m.Evaluate(params, b)
		if err != nil {
			return nil, nil, err
		}
		count, c := int64(b.N), int64(correct)
		return &wire.Response{Count: &count, LossSum: &loss, Correct: &c}, nil, nil
	}
	return nil, nil, fmt.Errorf("unknown op %q", req.Op)
}

func declare(m Model, sh *shared, req *wire.Request) (*wire.Response, [][]float32, error) {
	if req.Version != wire.Version {
		return nil, nil, fmt.Errorf("protocol version %d, this SDK speaks %d", req.Version, wire.Version)
	}
	ps, err := m.Declare(Config{Seed: req.Seed, Inputs: req.Inputs, Outputs: req.Outputs, Hidden: req.Hidden, Threads: req.Threads})
	if err != nil {
		return nil, nil, err
	}
	resp := &wire.Response{Version: wire.Version}
	if req.Offer >= wire.VersionShm && req.Shm != nil && inherited(req.Shm) {
		sh.offer, resp.Version = req.Shm, wire.VersionShm
	}
	sh.classes = 0
	if req.Outputs > 1 {
		sh.classes = req.Outputs
	}
	var payload [][]float32
	for _, p := range ps {
		t := wire.Tensor{Name: p.Name, Shape: p.Shape}
		if t.Size() != len(p.Init) {
			return nil, nil, fmt.Errorf("param %q: %d initial values for shape %v", p.Name, len(p.Init), p.Shape)
		}
		resp.Params = append(resp.Params, t)
		payload = append(payload, p.Init)
	}
	return resp, payload, nil
}

// inherited reports whether the program holds the descriptors the trainer
// offered: a launcher between the trainer and the program (one that
// closes inherited descriptors, as Python's subprocess does by default)
// leaves them closed, or files the program opened since in their place
// (Go's runtime opens its own), and the program then answers version 1,
// the pipe. The trainer's are memfds, which alone have seals to read.
func inherited(o *wire.ShmOffer) bool {
	for _, fd := range []int{o.Params, o.Records, o.Grads} {
		if _, err := unix.FcntlInt(uintptr(fd), unix.F_GET_SEALS, 0); err != nil {
			return false
		}
	}
	return true
}

// splitBatch cuts a batch request's payload (PayloadFloats checked its
// size); a classifier's labels (classes > 1), which the trainer checked
// are class indices, also as Labels.
func splitBatch(req *wire.Request, data []float32, classes int) ([][]float32, Batch) {
	nx := req.N * req.Inputs
	b := Batch{N: req.N, Inputs: req.Inputs, X: data[:nx], Y: data[nx : nx+req.N]}
	if classes > 1 {
		b.Labels = make([]int32, req.N)
		for i, y := range b.Y {
			b.Labels[i] = int32(y)
		}
	}
	return split(data[nx+req.N:], req.Params), b
}
