package program

import (
	"context"
	"fmt"

	"github.com/gtrain/gtrain/model"
	"github.com/gtrain/gtrain/program/wire"
)

// Progress says whether the program accepted progress frames at declare
// (wire.Request.Progress): GradientProgress then tells each parameter's
// gradient as the program says it is final, and a trainer can push it
// while the program computes the rest, as it does for a built-in model.
func (c *Client) Progress() bool { return c.progress }

// GradientProgress is GradientAt telling p, from another goroutine, what
// the program's progress frames say: Ready(j) once parameter j's gradient
// sums are final in the shared gradients (each parameter at most once,
// before the answer; checked finite first), Partial(j, n) once their first
// n floats are, Released(j) once the program reads parameter j no more
// (each when not nil). A parameter the program never tells is final, and
// released, when it returns. With p.Await set, the request is sent ahead
// of its parameters (ahead.go). Only for a program that accepted progress
// frames.
func (c *Client) GradientProgress(ctx context.Context, st Step, ps []model.ParamSpec, params [][]float32, b model.Batch, grads [][]float32, p *model.Progress) (float64, error) {
	if !c.progress {
		return 0, fmt.Errorf("program: progress frames were not accepted at declare")
	}
	if p != nil && p.Await != nil && !c.ahead {
		return 0, fmt.Errorf("program: requests sent ahead were not accepted at declare")
	}
	tr, err := c.tableRequest(b.N, nil)
	if err != nil {
		return 0, err
	}
	return c.gradientShm(ctx, st, ps, params, b, tr, grads, nil, p)
}

// readAnswer reads frames until the answer, telling x the progress frames
// before it (nil x: a request that expects none). want is the answer's
// payload (call's).
func (c *Client) readAnswer(resp *wire.Response, want func() (int, error), x *exchange) ([]float32, error) {
	for {
		*resp = wire.Response{}
		data, err := wire.ReadFrame(c.stdout, resp, func() (int, error) {
			if !resp.IsProgress() {
				return want()
			}
			if resp.Floats != 0 {
				return 0, fmt.Errorf("%w: a progress frame announces %d floats, want 0", wire.ErrMalformed, resp.Floats)
			}
			return 0, nil
		})
		if err != nil || !resp.IsProgress() {
			return data, err
		}
		if err := x.tellFrame(resp); err != nil {
			return nil, err
		}
	}
}

// tellFrame checks a progress frame's parameters and tells them to x's
// listener. x is its request's own, so the reading goroutine may outlive
// a timed-out call. A nil x expects no frame.
func (x *exchange) tellFrame(f *wire.Response) error {
	ready := f.Ready
	if x == nil {
		return fmt.Errorf("%w: a progress frame (ready %v, released %v) outside a gradient request, or not accepted at declare", wire.ErrMalformed, clipInts(ready), clipInts(f.Released))
	}
	if (len(ready) > 0 || len(f.Partial) > 0) && !x.mayWrite() {
		return fmt.Errorf("%w: a gradient told final (ready %v, partial %v) in a request sent ahead before its go", wire.ErrMalformed, clipInts(ready), f.Partial[:min(len(f.Partial), 8)])
	}
	for _, j := range f.Released {
		if j < 0 || j >= len(x.freed) || x.freed[j] {
			return fmt.Errorf("%w: progress frame: released parameter %d is not one of the %d declared, or was released before", wire.ErrMalformed, j, len(x.freed))
		}
		x.freed[j] = true
		if x.tell.Released != nil {
			x.tell.Released(j)
		}
	}
	for _, part := range f.Partial {
		j, n := part[0], part[1]
		if j < 0 || j >= len(x.told) || x.told[j] || n <= x.final[j] || n > len(x.views[j]) {
			return fmt.Errorf("%w: progress frame: partial %v: not a parameter of the %d declared, told before, or not more of it than before", wire.ErrMalformed, part, len(x.told))
		}
		if err := finiteTold(x.views[j], j, x.final[j], n); err != nil {
			return err
		}
		x.final[j] = n
		if x.tell.Partial != nil {
			x.tell.Partial(j, n)
		}
	}
	for _, j := range ready {
		if j < 0 || j >= len(x.told) || x.told[j] {
			return fmt.Errorf("%w: progress frame: parameter %d is not one of the %d declared, or was told before", wire.ErrMalformed, j, len(x.told))
		}
		x.told[j] = true
		if err := finiteTold(x.views[j], j, x.final[j], len(x.views[j])); err != nil {
			return err
		}
		if x.tell.Ready != nil {
			x.tell.Ready(j)
		}
	}
	return nil
}

// finiteTold checks the values [from, to) of parameter j's gradient g, told
// final: those not checked when told before (partial).
func finiteTold(g []float32, j, from, to int) error {
	if i := firstNonFinite(g[from:to]); i >= 0 {
		return fmt.Errorf("%w: gradient value %d of parameter %d is %v (told final)", wire.ErrMalformed, from+i, j, g[from+i])
	}
	return nil
}

func clipInts(v []int) []int { return v[:min(len(v), 8)] }
