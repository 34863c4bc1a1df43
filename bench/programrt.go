package bench

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/gtrain/gtrain/model"
	"github.com/gtrain/gtrain/program"
)

// RoundTripParams is program_roundtrip_1m's model: 1 Mi float32 parameters.
const RoundTripParams = 1 << 20

// ProgramRoundTripMs is the ms of one gradient round trip of a do-nothing
// Go program (bench/noopprog) with RoundTripParams parameters and a batch
// of one record, as a trainer does it: its gradient buffers zeroed, then
// GradientAt on the client's own buffers (shared memory), or, with pipe,
// on buffers of its own through the pipe (the protocol of version 1). The
// best mean over rounds of calls calls.
func ProgramRoundTripMs(pipe bool, calls, rounds int) (float64, error) {
	dir, err := os.MkdirTemp("", "gtrain-noopprog")
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(dir)
	bin := filepath.Join(dir, "noopprog")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/gtrain/gtrain/bench/noopprog").CombinedOutput(); err != nil {
		return 0, fmt.Errorf("go build noopprog: %w: %s", err, out)
	}
	c, err := program.Start(program.Config{Argv: []string{bin}, Dir: dir, Pipe: pipe})
	if err != nil {
		return 0, err
	}
	defer c.Close()
	ctx := context.Background()
	d, err := c.Declare(ctx, program.DeclareArgs{Seed: 1, Inputs: 1, Outputs: 1})
	if err != nil {
		return 0, err
	}
	params, grads := c.Buffers()
	if params == nil {
		params, grads = [][]float32{make([]float32, RoundTripParams)}, [][]float32{make([]float32, RoundTripParams)}
	}
	b := model.Batch{N: 1, Inputs: 1, X: []float32{0.5}, Y: []float32{1}}
	return bestMeanMs(calls, rounds, func() error {
		clear(grads[0])
		_, err := c.GradientAt(ctx, program.Step{Number: 1}, d.Params, params, b, grads)
		return err
	})
}

// MemcpyMs is program_roundtrip_1m's ceiling: the ms of copying
// RoundTripParams float32s twice (parameters in, gradients out), the best
// mean over rounds of calls copies.
func MemcpyMs(calls, rounds int) (float64, error) {
	src, dst := make([]float32, RoundTripParams), make([]float32, RoundTripParams)
	for i := range src {
		src[i], dst[i] = float32(i), 1 // touched: no page faults in the timing
	}
	return bestMeanMs(calls, rounds, func() error {
		copy(dst, src)
		copy(src, dst)
		return nil
	})
}

// bestMeanMs is the best, over rounds, of the mean ms of calls calls of f.
func bestMeanMs(calls, rounds int, f func() error) (float64, error) {
	bestMs := 0.0
	for range rounds {
		start := time.Now()
		for range calls {
			if err := f(); err != nil {
				return 0, err
			}
		}
		ms := float64(time.Since(start).Microseconds()) / 1000 / float64(calls)
		if bestMs == 0 || ms < bestMs {
			bestMs = ms
		}
	}
	return bestMs, nil
}
