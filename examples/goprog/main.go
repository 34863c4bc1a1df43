// Command goprog is a gtrain model program written with the Go SDK
// (sdk/gtrainprog): softmax regression, inputs -> outputs classes. Build it
// into its workspace and point a job at it:
//
//	go build -o examples/goprog/goprog ./examples/goprog
//	model: {kind: program, entry: ./goprog, workspace: goprog, inputs: 784, outputs: 10}
package main

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"

	"github.com/gtrain/gtrain/sdk/gtrainprog"
)

type softmax struct{ inputs, classes int }

func (s *softmax) Declare(c gtrainprog.Config) ([]gtrainprog.Param, error) {
	if c.Outputs < 2 {
		return nil, fmt.Errorf("softmax needs model.outputs >= 2 classes, got %d", c.Outputs)
	}
	s.inputs, s.classes = c.Inputs, c.Outputs
	rng := rand.New(rand.NewPCG(c.Seed, 0)) // deterministic for the seed
	w := make([]float32, c.Inputs*c.Outputs)
	for i := range w {
		w[i] = float32(rng.Float64()*0.02 - 0.01)
	}
	return []gtrainprog.Param{
		{Name: "w", Shape: []int{c.Inputs, c.Outputs}, Init: w},
		{Name: "b", Shape: []int{c.Outputs}, Init: make([]float32, c.Outputs)},
	}, nil
}

// probs returns the class probabilities of record r.
func (s *softmax) probs(params [][]float32, b gtrainprog.Batch, r int) ([]float64, error) {
	w, bias := params[0], params[1]
	s.inputs, s.classes = b.Inputs, len(bias) // from the request: the shapes gtrain holds
	z := make([]float64, s.classes)
	for k := range z {
		z[k] = float64(bias[k])
		for i := 0; i < s.inputs; i++ {
			z[k] += float64(b.X[r*s.inputs+i]) * float64(w[i*s.classes+k])
		}
	}
	m := z[0]
	for _, v := range z {
		m = math.Max(m, v)
	}
	var sum float64
	for k := range z {
		z[k] = math.Exp(z[k] - m)
		sum += z[k]
	}
	for k := range z {
		z[k] /= sum
	}
	if y := int(b.Y[r]); y < 0 || y >= s.classes {
		return nil, fmt.Errorf("record %d: label %v is not a class in [0, %d)", r, b.Y[r], s.classes)
	}
	return z, nil
}

func (s *softmax) Gradient(params [][]float32, b gtrainprog.Batch, grads [][]float32) (float64, error) {
	var loss float64
	for r := 0; r < b.N; r++ {
		p, err := s.probs(params, b, r)
		if err != nil {
			return 0, err
		}
		y := int(b.Y[r])
		loss -= math.Log(math.Max(p[y], 1e-300))
		p[y]--
		for k, d := range p {
			grads[1][k] += float32(d)
			for i := 0; i < s.inputs; i++ {
				grads[0][i*s.classes+k] += float32(float64(b.X[r*s.inputs+i]) * d)
			}
		}
	}
	return loss, nil
}

func (s *softmax) Evaluate(params [][]float32, b gtrainprog.Batch) (float64, int, error) {
	var loss float64
	correct := 0
	for r := 0; r < b.N; r++ {
		p, err := s.probs(params, b, r)
		if err != nil {
			return 0, 0, err
		}
		y, best := int(b.Y[r]), 0
		for k := range p {
			if p[k] > p[best] {
				best = k
			}
		}
		if best == y {
			correct++
		}
		loss -= math.Log(math.Max(p[y], 1e-300))
	}
	return loss, correct, nil
}

func main() {
	if err := gtrainprog.Serve(&softmax{}); err != nil {
		fmt.Fprintln(os.Stderr, "goprog:", err)
		os.Exit(1)
	}
}
