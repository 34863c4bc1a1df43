package client

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"

	"github.com/gtrain/gtrain/api"
	"github.com/gtrain/gtrain/pserver/wire"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// Pulled says whether a PushPull brought back the next step's parameters
// from every pserver, and the least and the most advanced step they were of.
type Pulled struct {
	All             bool
	Lowest, Highest int64
}

// PushPull pushes like Push, calls accepted (if not nil) once every
// pserver acknowledged the push (from another goroutine, while the step may
// still wait for other micro-batches), then fills params with the parameters
// each pserver streams once it applied the step (PServer.PushPull). A
// pserver that answered without parameters (the step was not complete in
// time, a rollback) leaves Pulled.All false, and
// params partly written: the caller pulls. A nil error means the push is
// applied, as Push's does; accepted is not called when the push was in an
// applied step already (AlreadyExists).
func (c *Client) PushPull(ctx context.Context, microBatch int, step, rollbackEpoch, records int64, checkpoint bool, grads, params [][]float32, accepted func(), opts ...PushOption) (Pulled, error) {
	if !wire.DecodesInPlace() {
		return Pulled{}, c.Push(ctx, microBatch, step, rollbackEpoch, records, checkpoint, grads, opts...)
	}
	h := pushHeader{trainer: int32(microBatch), step: step, rollbackEpoch: rollbackEpoch, records: records, checkpoint: checkpoint}
	if err := c.apply(&h, opts); err != nil {
		return Pulled{}, err
	}
	if h.onParams != nil {
		h.answered = newAnswers(c, h.onParams).answered
	}
	steps, got := make([]int64, len(c.servers)), make([]bool, len(c.servers))
	var acks atomic.Int32
	ack := func() {
		if int(acks.Add(1)) == len(c.servers) && accepted != nil {
			accepted()
		}
	}
	err := c.eachServer(ctx, func(ctx context.Context, i int) error {
		var err error
		if h.batch != nil {
			steps[i], got[i], err = c.pushPullRowsTo(ctx, i, h, grads, params, ack)
		} else {
			steps[i], got[i], err = c.pushPullVia(ctx, i, c.servers[i].PushPull, h, grads, params, ack)
		}
		return err
	})
	if err != nil {
		return Pulled{}, err
	}
	p := Pulled{All: true, Lowest: steps[0], Highest: steps[0]}
	for i, s := range steps {
		p.All = p.All && got[i]
		p.Lowest, p.Highest = min(p.Lowest, s), max(p.Highest, s)
	}
	return p, nil
}

// pushPullVia pushes the blocks pserver i holds through open (its
// PushPull, or PushPullRows for a push carrying rows: h.carry), calls ack
// on its acknowledgement and reads back its parameters; got reports
// whether any came. Once acknowledged, the push is applied whatever comes
// after.
func (c *Client) pushPullVia(ctx context.Context, i int, open pushPullOpener, h pushHeader, grads, params [][]float32, ack func()) (step int64, got bool, err error) {
	stream, err := open(ctx, grpc.ForceCodecV2(wire.Codec{}))
	if err != nil {
		return 0, false, fmt.Errorf("push to pserver %d: %w", i, err)
	}
	// The region is kept for the next push once the pserver acknowledged
	// this one (regionSlot.finish says why).
	rg := c.regionFor(ctx, i)
	acked := false
	if rg != nil {
		defer func() { rg.finish(acked) }()
	}
	sink := &paramSink{c: c, server: i, arrays: [][][]float32{params}, region: rg}
	holds, err := c.sendBlocks(ctx, i, stream.SendMsg, h, grads, rg)
	if err != nil {
		err = sendFailed(i, func() error { return stream.RecvMsg(sink) }, err)
		acked = err == nil // AlreadyExists: the handler returned
		return 0, false, err
	}
	if err := stream.CloseSend(); err != nil {
		return 0, false, fmt.Errorf("push to pserver %d: %w", i, err)
	}
	switch err := stream.RecvMsg(sink); {
	case status.Code(err) == codes.AlreadyExists:
		acked = true         // the handler returned
		return 0, false, nil // applied with our push in it, and past it
	case err != nil:
		return 0, false, fmt.Errorf("push to pserver %d: %w", i, err)
	}
	acked = true
	ack()
	if h.beforePull != nil {
		if err := h.beforePull(ctx, c.heldBy(i)); err != nil {
			return 0, false, nil // applied; the parameters are left to a pull
		}
	}
	got = !holds // nothing to bring: delivered
	for {
		if err := stream.RecvMsg(sink); err != nil {
			// io.EOF: the end; another error: the parameters are lost, not the push.
			got = got && errors.Is(err, io.EOF)
			if got && h.answered != nil {
				h.answered(i, sink.step)
			}
			return sink.step, got, nil
		}
		got = true
	}
}

// pushPullOpener opens a PushPull or PushPullRows stream.
type pushPullOpener func(ctx context.Context, opts ...grpc.CallOption) (api.PServer_PushPullClient, error)

// answers turns the pservers' answers to one PushPull into OnParams's
// calls: a parameter is written once each pserver holding a block of it
// answered.
type answers struct {
	mu      sync.Mutex
	c       *Client
	left    []int   // each parameter's pservers yet to answer
	seen    []bool  // one answered
	step    []int64 // the step they answered with (-1: several)
	written func(param int, step int64)
}

func newAnswers(c *Client, written func(int, int64)) *answers {
	params := 0
	for _, b := range c.blocks {
		params = max(params, b.Param+1)
	}
	a := &answers{c: c, left: make([]int, params), seen: make([]bool, params), step: make([]int64, params), written: written}
	for i := range c.servers {
		for _, j := range c.heldBy(i) {
			a.left[j]++
		}
	}
	return a
}

// answered counts pserver i's answer, of step's parameters, and tells the
// parameters it completes.
func (a *answers) answered(i int, step int64) {
	a.mu.Lock()
	var done []int
	var steps []int64
	for _, j := range a.c.heldBy(i) {
		if a.left[j] == 0 {
			continue // not expected: a pserver answers once
		}
		switch {
		case !a.seen[j]:
			a.seen[j], a.step[j] = true, step
		case a.step[j] != step:
			a.step[j] = -1
		}
		if a.left[j]--; a.left[j] == 0 {
			done, steps = append(done, j), append(steps, a.step[j])
		}
	}
	a.mu.Unlock()
	for k, j := range done {
		a.written(j, steps[k])
	}
}
