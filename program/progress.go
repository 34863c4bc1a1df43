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

// GradientProgress is GradientAt calling ready(j), from another goroutine,
// as the program tells parameter j's gradient sums final in the shared
// gradients (each parameter at most once, before the answer; checked
// finite first). A parameter the program never tells is final when it
// returns. Only for a program that accepted progress frames.
func (c *Client) GradientProgress(ctx context.Context, st Step, ps []model.ParamSpec, params [][]float32, b model.Batch, grads [][]float32, ready func(param int)) (float64, error) {
	if !c.progress {
		return 0, fmt.Errorf("program: progress frames were not accepted at declare")
	}
	c.onReady = ready
	defer func() { c.onReady = nil }()
	return c.GradientAt(ctx, st, ps, params, b, grads)
}

// expectProgress readies the state of a gradient request's progress frames
// (a program that accepted them may send them with any gradient request),
// and returns what clears it.
func (c *Client) expectProgress() (done func()) {
	if !c.progress {
		return func() {}
	}
	c.told = make([]bool, len(c.shm.gradViews))
	return func() { c.told = nil }
}

// readAnswer reads frames until the answer, telling the progress frames
// before it (tell, from readyTeller). want is the answer's payload (call's).
func (c *Client) readAnswer(resp *wire.Response, want func() (int, error), tell func([]int) error) ([]float32, error) {
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
		if err := tell(resp.Ready); err != nil {
			return nil, err
		}
	}
}

// readyTeller is what checks a progress frame's parameters and tells them,
// for the request about to be sent: it holds its own reference to the
// request's state, as the reading goroutine may outlive a timed-out call.
func (c *Client) readyTeller() func([]int) error {
	onReady, told := c.onReady, c.told
	var views [][]float32
	if c.shm != nil {
		views = c.shm.gradViews
	}
	return func(ready []int) error {
		if told == nil {
			return fmt.Errorf("%w: a progress frame (ready %v) outside a gradient request, or not accepted at declare", wire.ErrMalformed, clipInts(ready))
		}
		for _, j := range ready {
			if j < 0 || j >= len(told) || told[j] {
				return fmt.Errorf("%w: progress frame: parameter %d is not one of the %d declared, or was told before", wire.ErrMalformed, j, len(told))
			}
			told[j] = true
			if i := firstNonFinite(views[j]); i >= 0 {
				return fmt.Errorf("%w: gradient value %d of parameter %d is %v (told final)", wire.ErrMalformed, i, j, views[j][i])
			}
			if onReady != nil {
				onReady(j)
			}
		}
		return nil
	}
}

func clipInts(v []int) []int { return v[:min(len(v), 8)] }
