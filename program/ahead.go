package program

import (
	"context"
	"fmt"

	"github.com/gtrain/gtrain/model"
	"github.com/gtrain/gtrain/program/wire"
)

// Ahead reports whether the program accepted, at declare, gradient
// requests sent before their parameters are all back (wire.Request.Ahead).
// Only a program that accepted progress frames and overwrite may: the
// request goes out while the last push still reads the gradients, which
// the trainer then cannot clear.
func (c *Client) Ahead() bool { return c.ahead }

// gradientAhead is GradientProgress sent before params holds all its
// values. p.Await(j) returns once parameter j is written there (true) or
// will never be (false); p.Await(-1), asked once they all are, whether the
// gradient is still wanted. They are asked in declared order on another
// goroutine, which tells the program each arrival (wire.OpArrived), then
// lets it write its gradients (wire.OpGo), or stops it (wire.OpStop) at
// the first false. A program stopped answers so: it wrote no gradient,
// p.Stopped is set, and the loss means nothing.
func (c *Client) gradientAhead(ctx context.Context, st Step, ps []model.ParamSpec, params [][]float32, b model.Batch, grads [][]float32, p *model.Progress) (float64, error) {
	if !c.ahead {
		return 0, fmt.Errorf("program: requests sent ahead were not accepted at declare")
	}
	c.tellTo, c.await = p, p.Await
	c.stopSent.Store(false)
	defer func() { c.tellTo, c.await = nil, nil }()
	loss, err := c.GradientAt(ctx, st, ps, params, b, grads)
	if err == nil && c.stopSent.Load() {
		p.Stopped = true
		return 0, nil
	}
	return loss, err
}

// arrivalsSender returns what tells the program, once req went out, the
// arrivals of a request sent ahead; nil for any other request. It holds
// its own references: the reading goroutine may outlive a timed-out call.
func (c *Client) arrivalsSender(req *wire.Request) func() {
	if req.Op != wire.OpGradient || !req.Ahead || c.await == nil {
		return nil // a declare's Ahead is the offer
	}
	await, n, stdin := c.await, len(req.Params), c.stdin
	send := func(r *wire.Request) bool { return wire.WriteFrame(stdin, r) == nil } // a broken pipe: the call fails on its own
	return func() {
		for j := 0; j < n; j++ {
			if !await(j) {
				c.stopSent.Store(true)
				send(&wire.Request{Op: wire.OpStop})
				return
			}
			if !send(&wire.Request{Op: wire.OpArrived, Arrived: []int{j}}) {
				return
			}
		}
		if !await(-1) {
			c.stopSent.Store(true)
			send(&wire.Request{Op: wire.OpStop})
			return
		}
		send(&wire.Request{Op: wire.OpGo})
	}
}

// checkStopped accepts a stopped answer to a request that was stopped.
func (c *Client) checkStopped(resp *wire.Response) error {
	if !c.stopSent.Load() || resp.Count != nil || resp.LossSum != nil || resp.Correct != nil {
		return c.protocolError("gradient", "a stopped answer to a request not stopped, or with counts")
	}
	return nil
}
