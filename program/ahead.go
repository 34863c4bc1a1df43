package program

import "github.com/gtrain/gtrain/program/wire"

// Ahead reports whether the program accepted, at declare, gradient
// requests sent before their parameters are all back (wire.Request.Ahead).
// Only a program that accepted progress frames and overwrite may: the
// request goes out while the last push still reads the gradients, which
// the trainer then cannot clear.
func (c *Client) Ahead() bool { return c.ahead }

// arrivalsSender returns what tells the program, once req went out, the
// arrivals of a request sent ahead; nil for any other request. sl.written
// is closed once its last frame is; its frames wait in the pipe behind the
// request until the answer before (sl.prevRead), and have the timeout
// from then (writeFrame).
//
// A gradient request sent ahead (GradientProgress with p.Await set) goes
// out before params holds all its values, and may go while the request
// before it waits for its answer. p.Await(j) returns once parameter j is
// written there (true) or will never be (false); p.Await(-1), asked once
// they all are, whether the gradient is still wanted. The sender asks them
// in declared order, tells the program each arrival (wire.OpArrived),
// then lets it write its gradients (wire.OpGo), or stops it (wire.OpStop)
// at the first false. A program stopped answers so: it wrote no gradient,
// p.Stopped is set, and the loss means nothing.
func (c *Client) arrivalsSender(req *wire.Request, x *exchange, sl slot) func() {
	if req.Op != wire.OpGradient || !req.Ahead || x == nil || x.await == nil {
		return nil // a declare's Ahead is the offer
	}
	n := len(req.Params)
	// A broken pipe, or one the program stopped reading: the call fails on its own.
	send := func(r *wire.Request) bool { return c.writeFrame(req.Op, sl.prevRead, r) == nil }
	stop := func() {
		x.stopSent.Store(true)
		send(&wire.Request{Op: wire.OpStop})
	}
	return func() {
		defer close(sl.written)
		for j := 0; j < n; j++ {
			if !x.await(j) {
				stop()
				return
			}
			if !send(&wire.Request{Op: wire.OpArrived, Arrived: []int{j}}) {
				return
			}
		}
		if !x.await(-1) {
			stop()
			return
		}
		x.goSent.Store(true)
		send(&wire.Request{Op: wire.OpGo})
	}
}

// checkStopped accepts a stopped answer to a request that was stopped.
func (c *Client) checkStopped(resp *wire.Response, x *exchange) error {
	if x == nil || !x.stopSent.Load() || resp.Count != nil || resp.LossSum != nil || resp.Correct != nil {
		return c.protocolError("gradient", "a stopped answer to a request not stopped, or with counts")
	}
	return nil
}
