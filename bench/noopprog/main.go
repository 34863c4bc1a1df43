// Command noopprog is the do-nothing model program of the
// program_roundtrip_1m benchmark: it declares one tensor of
// GTRAIN_NOOP_PARAMS zeros (default 1 Mi) and answers every gradient with a
// zero loss and no work, so that a round trip times the transport alone
// (headers on the pipe, tensors in shared memory), through the Go SDK.
package main

import (
	"fmt"
	"os"
	"strconv"

	"github.com/gtrain/gtrain/sdk/gtrainprog"
)

type noop struct{ size int }

func (n noop) Declare(gtrainprog.Config) ([]gtrainprog.Param, error) {
	return []gtrainprog.Param{{Name: "w", Shape: []int{n.size}, Init: make([]float32, n.size)}}, nil
}

func (noop) Gradient([][]float32, gtrainprog.Batch, [][]float32) (float64, error) { return 0, nil }

func (noop) Evaluate([][]float32, gtrainprog.Batch) (float64, int, error) { return 0, 0, nil }

func main() {
	size := 1 << 20
	if s := os.Getenv("GTRAIN_NOOP_PARAMS"); s != "" {
		var err error
		if size, err = strconv.Atoi(s); err != nil || size <= 0 {
			fmt.Fprintf(os.Stderr, "noopprog: GTRAIN_NOOP_PARAMS=%q is not a positive count\n", s)
			os.Exit(2)
		}
	}
	if err := gtrainprog.Serve(noop{size}); err != nil {
		fmt.Fprintln(os.Stderr, "noopprog:", err)
		os.Exit(1)
	}
}
