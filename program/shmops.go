package program

import (
	"context"
	"fmt"

	"github.com/gtrain/gtrain/model"
	"github.com/gtrain/gtrain/program/wire"
)

// Step is what a gradient request tells a program besides its batch: the
// step number, and the seed of the request's randomness (dropout,
// augmentation). Both depend only on the micro-batch, never on the trainer
// that computes it, so a recomputed micro-batch gets the same gradient.
type Step struct {
	Number int64
	Seed   uint64
}

// RequestSeed is the seed of micro-batch mb of step: the job's seed mixed
// with both (splitmix64), so that neighbouring steps get unrelated seeds.
func RequestSeed(jobSeed uint64, step int64, mb int) uint64 {
	z := jobSeed
	for _, v := range []uint64{uint64(step), uint64(mb)} {
		z += 0x9e3779b97f4a7c15 + v
		z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
		z = (z ^ (z >> 27)) * 0x94d049bb133111eb
		z ^= z >> 31
	}
	return z
}

// Shared reports whether the program accepted shared memory at declare.
func (c *Client) Shared() bool { return c.shared }

// Buffers returns parameter and gradient buffers that live in the shared
// memory (nil when the program speaks the pipe protocol). A caller that
// pulls its parameters into these and passes them to GradientAt spares
// every copy: the program reads the parameters in place and adds its
// gradient sums into grads, which must hold zeros then, or, when it
// Overwrites, writes them over whatever grads holds (on a failed request
// their content is undefined). They stay valid for the life of the process,
// after Close too.
func (c *Client) Buffers() (params, grads [][]float32) {
	if !c.shared {
		return nil, nil
	}
	c.shm.handedOut = true
	return c.shm.paramViews, c.shm.gradViews
}

// Overwrites reports whether the program accepted, at declare, to write
// every value of the shared gradients in each gradient request
// (wire.Request.Overwrite): a caller passing Buffers' grads to GradientAt
// need not clear them first. Clearing the 7.4 MB of the MLP 784-1024-1024-10
// took the trainer about 0.5 ms a step, between the push's answer and the
// next request, when the program waits.
func (c *Client) Overwrites() bool { return c.overwrite }

// useShm keeps the shared memory when the program accepted it at declare,
// and releases it otherwise.
func (c *Client) useShm(accepted bool, ps []model.ParamSpec, outputs int) error {
	if outputs > 1 {
		c.classes = outputs
	}
	if !accepted {
		c.shm.close()
		c.shm = nil
		return nil
	}
	if err := c.shm.size(ps); err != nil {
		return c.fail("declare", err)
	}
	c.shared = true
	return nil
}

// offered says, for an error, which other version was offered.
func (c *Client) offered() string {
	if c.shm == nil {
		return ""
	}
	return fmt.Sprintf(" or %d", wire.VersionShm)
}

// callShm puts params and b into the shared memory and sends the header.
// The tables' rows (tr) and the answer's row gradients (want floats) go
// through the pipe (rows.go says why). x is a gradient request's exchange.
func (c *Client) callShm(ctx context.Context, op string, st Step, ps []model.ParamSpec, params [][]float32, b model.Batch, tr tableReq, want int, resp *wire.Response, x *exchange) ([]float32, error) {
	if err := c.brokenErr(); err != nil {
		return nil, err
	}
	views := c.shm.paramViews
	if len(ps) != len(views) || len(params) != len(views) {
		return nil, fmt.Errorf("program: %d parameters given, %d declared", len(params), len(views))
	}
	for j, v := range views {
		if ps[j].Size() != len(v) || len(params[j]) != len(v) {
			return nil, fmt.Errorf("program: parameter %q has %d values, %d declared", ps[j].Name, len(params[j]), len(v))
		}
		if !aliases(params[j], v) {
			copy(v, params[j])
		}
	}
	at, done := c.recordsAt(recordsSize(b))
	defer done()
	batch, err := c.shm.putRecords(b, c.classes, at)
	if err != nil {
		// The data, not the program: the stream is intact. It fails the job
		// all the same, since a restart would read the same records.
		return nil, &Error{Op: op, Err: err}
	}
	req := &wire.Request{Op: op, Inputs: b.Inputs, N: b.N, Params: tensorsOf(ps), Step: st.Number, Seed: st.Seed, Batch: batch, Tables: tr.hs,
		Ahead: x != nil && x.await != nil}
	return c.call(ctx, req, tr.payload, resp, func() int { return want }, x)
}

// gradientShm is GradientAt through the shared memory, telling p (nil:
// nobody): the program adds its sums into the grads file, which holds
// zeros when the request goes out, or writes them over it (Overwrites).
func (c *Client) gradientShm(ctx context.Context, st Step, ps []model.ParamSpec, params [][]float32, b model.Batch, tr tableReq, grads, rowGrads [][]float32, p *model.Progress) (float64, error) {
	views := c.shm.gradViews
	if len(grads) != len(views) {
		return 0, fmt.Errorf("program: %d gradient buffers given, %d declared", len(grads), len(views))
	}
	if p != nil && p.Await != nil && !c.ownBuffers(params, grads) {
		return 0, fmt.Errorf("program: a request sent ahead reads and writes the client's own buffers (Buffers)")
	}
	for j, v := range views {
		if !aliases(grads[j], v) {
			clear(v)
		}
	}
	var resp wire.Response
	want := rowGradFloats(tr.hs)
	x := c.newExchange(p)
	data, err := c.callShm(ctx, wire.OpGradient, st, ps, params, b, tr, want, &resp, x)
	if err != nil {
		return 0, err
	}
	if resp.Stopped {
		if err := c.checkStopped(&resp, x); err != nil {
			return 0, err
		}
		p.Stopped = true
		return 0, nil
	}
	if x != nil && x.stopSent.Load() {
		// It never got its go: whatever it wrote, it wrote while the last
		// push may have read the gradients.
		return 0, c.protocolError("gradient", `a computed answer to a request sent ahead that the trainer stopped: answer {"stopped": true} having written no gradient`)
	}
	if err := c.checkCounts("gradient", &resp, b.N, len(data), want); err != nil {
		return 0, err
	}
	if resp.Correct != nil {
		return 0, c.protocolError("gradient", "a gradient answer has no correct count")
	}
	for j, v := range views {
		if x.toldFinal(j) {
			continue // checked when told final (tellFrame), while the program computed the rest
		}
		if i := firstNonFinite(v); i >= 0 {
			return 0, c.protocolError("gradient", "gradient value %d of %q is %v", i, ps[j].Name, v[i])
		}
	}
	if err := c.addRowGrads(tr.hs, data, rowGrads); err != nil {
		return 0, err
	}
	for j, v := range views {
		if !aliases(grads[j], v) {
			for k, x := range v {
				grads[j][k] += x
			}
		}
	}
	return *resp.LossSum, nil
}

func tensorsOf(ps []model.ParamSpec) []wire.Tensor {
	ts := make([]wire.Tensor, len(ps))
	for j, p := range ps {
		ts[j] = wire.Tensor{Name: p.Name, Shape: p.Shape}
	}
	return ts
}

// ownBuffers says whether params and grads are the client's own (Buffers).
func (c *Client) ownBuffers(params, grads [][]float32) bool {
	for j := range c.shm.paramViews {
		if !aliases(params[j], c.shm.paramViews[j]) || !aliases(grads[j], c.shm.gradViews[j]) {
			return false
		}
	}
	return true
}
