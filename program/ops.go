package program

import (
	"context"
	"fmt"
	"math"
	"regexp"
	"strings"
	"unicode"

	"github.com/gtrain/gtrain/jobspec"
	"github.com/gtrain/gtrain/model"
	"github.com/gtrain/gtrain/program/wire"
)

// MaxParams bounds a declaration: 512 Mi floats, what one frame's payload
// carries (wire.MaxPayload), since the initial values always come through
// the pipe. The job spec allows built-in models twice that
// (jobspec.MaxParams).
const MaxParams = wire.MaxPayload / 4

// maxParamTensors bounds how many tensors a program may declare.
const maxParamTensors = 4096

// paramName is what a parameter may be called: it names a file in the model
// directory (NAME.f32), so nothing that could leave it.
var paramName = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_.-]{0,63}$`)

// DeclareArgs is what a program learns about the model it must declare.
type DeclareArgs struct {
	Seed    uint64
	Inputs  int
	Outputs int
	Hidden  []int
	// Threads is how many threads the program may compute on (the
	// trainer's cpu); a program fixes its thread count to it, so that its
	// answers do not depend on the machine it runs on.
	Threads int
	// IDFields are the records' id fields, the tables it may declare.
	IDFields []string
}

// Declaration is a program's parameters and their initial values.
type Declaration struct {
	Params []model.ParamSpec
	Init   [][]float32
	// Device is where the program says it computes ("cpu", "cuda:0
	// (NAME)"), cut to maxDeviceLen printable bytes; "" when it does not say.
	Device string
	// Tables are the embedding tables it declared (rows.go), in order.
	Tables []jobspec.DeclaredTable
}

// maxDeviceLen bounds what a program's declared device puts in a log line.
const maxDeviceLen = 128

// Declare asks the program for its parameters and their initial values.
func (c *Client) Declare(ctx context.Context, a DeclareArgs) (*Declaration, error) {
	req := &wire.Request{Op: wire.OpDeclare, Version: wire.Version, Seed: a.Seed,
		Inputs: a.Inputs, Outputs: a.Outputs, Hidden: a.Hidden, Threads: a.Threads, IDFields: a.IDFields}
	if c.shm != nil {
		req.Offer, req.Shm = wire.VersionShm, &wire.ShmOffer{Params: fdParams, Records: fdRecords, Grads: fdGrads}
		req.Progress, req.Overwrite, req.Ahead = true, true, true
	}
	var resp wire.Response
	data, err := c.call(ctx, req, nil, &resp, func() int { return declaredSize(resp.Params) }, nil)
	if err != nil {
		return nil, err
	}
	if resp.Version != wire.Version && (resp.Version != wire.VersionShm || c.shm == nil) {
		return nil, c.protocolError("declare", "version %d, want %d%s", resp.Version, wire.Version, c.offered())
	}
	if n := len(resp.Params); n == 0 || n > maxParamTensors {
		return nil, c.protocolError("declare", "%d parameters declared, want 1 to %d", n, maxParamTensors)
	}
	d := &Declaration{}
	seen, total := map[string]bool{}, 0
	for i, t := range resp.Params {
		if !paramName.MatchString(t.Name) || seen[t.Name] {
			return nil, c.protocolError("declare", "parameter %d: name %q is empty, repeated or not [A-Za-z0-9_.-]{1,64}", i, t.Name)
		}
		seen[t.Name] = true
		size := t.Size()
		if size == 0 || len(t.Shape) == 0 || total+size > MaxParams {
			return nil, c.protocolError("declare", "parameter %q: shape %v is empty, not positive or over %d elements in all", t.Name, t.Shape, MaxParams)
		}
		total += size
		d.Params = append(d.Params, model.ParamSpec{Name: t.Name, Shape: t.Shape})
	}
	if len(data) != total {
		return nil, c.protocolError("declare", "%d initial values for %d parameters", len(data), total)
	}
	if i := firstNonFinite(data); i >= 0 {
		return nil, c.protocolError("declare", "initial value %d is %v", i, data[i])
	}
	d.Init = split(data, d.Params)
	if d.Tables, err = c.checkTables(resp.Tables, a.IDFields); err != nil {
		return nil, err
	}
	c.tables = d.Tables
	d.Device = printable(resp.Device, maxDeviceLen)
	if err := c.useShm(resp.Version == wire.VersionShm, d.Params, a.Outputs); err != nil {
		return nil, err
	}
	c.progress = resp.Progress && c.shared
	c.overwrite = resp.Overwrite && c.shared
	c.ahead = resp.Ahead && c.progress && c.overwrite
	return d, nil
}

// Gradient adds to grads the gradient sums the program computed for batch b
// at params, and returns the loss sum. grads keeps its value on error,
// unless it is the client's own (Buffers).
func (c *Client) Gradient(ctx context.Context, ps []model.ParamSpec, params [][]float32, b model.Batch, grads [][]float32) (float64, error) {
	return c.GradientAt(ctx, Step{}, ps, params, b, grads)
}

// GradientAt is Gradient for the micro-batch st: a program speaking
// wire.VersionShm learns its step number and seed.
func (c *Client) GradientAt(ctx context.Context, st Step, ps []model.ParamSpec, params [][]float32, b model.Batch, grads [][]float32) (float64, error) {
	return c.GradientRows(ctx, st, ps, params, b, nil, grads, nil)
}

// GradientRows is GradientAt for a program that declared embedding
// tables: rows[i] holds the batch's ids and rows of table i (Tables), and
// the program's gradient sum of each distinct row is added into
// rowGrads[i] (as long as rows[i].Rows).
func (c *Client) GradientRows(ctx context.Context, st Step, ps []model.ParamSpec, params [][]float32, b model.Batch, rows []model.RecField, grads, rowGrads [][]float32) (float64, error) {
	tr, err := c.tableRequest(b.N, rows)
	if err != nil {
		return 0, err
	}
	if c.shared {
		return c.gradientShm(ctx, st, ps, params, b, tr, grads, rowGrads, nil)
	}
	dense := model.TotalSize(ps)
	want := dense + rowGradFloats(tr.hs)
	var resp wire.Response
	data, err := c.callPipe(ctx, wire.OpGradient, ps, params, b, tr, want, &resp)
	if err != nil {
		return 0, err
	}
	if err := c.checkCounts("gradient", &resp, b.N, len(data), want); err != nil {
		return 0, err
	}
	if resp.Correct != nil {
		return 0, c.protocolError("gradient", "a gradient answer has no correct count")
	}
	if i := firstNonFinite(data[:dense]); i >= 0 {
		return 0, c.protocolError("gradient", "gradient value %d is %v", i, data[i])
	}
	if err := c.addRowGrads(tr.hs, data[dense:], rowGrads); err != nil {
		return 0, err
	}
	for j, g := range split(data[:dense], ps) {
		for k, v := range g {
			grads[j][k] += v
		}
	}
	return *resp.LossSum, nil
}

// Evaluate returns the loss sum and the number of correct predictions the
// program computed for batch b at params.
func (c *Client) Evaluate(ctx context.Context, ps []model.ParamSpec, params [][]float32, b model.Batch) (float64, int, error) {
	return c.EvaluateRows(ctx, ps, params, b, nil)
}

// EvaluateRows is Evaluate for a program that declared embedding tables:
// rows[i] holds the batch's ids and rows of table i (Tables).
func (c *Client) EvaluateRows(ctx context.Context, ps []model.ParamSpec, params [][]float32, b model.Batch, rows []model.RecField) (float64, int, error) {
	tr, err := c.tableRequest(b.N, rows)
	if err != nil {
		return 0, 0, err
	}
	var resp wire.Response
	var data []float32
	if c.shared {
		data, err = c.callShm(ctx, wire.OpEvaluate, Step{}, ps, params, b, tr, 0, &resp, nil)
	} else {
		data, err = c.callPipe(ctx, wire.OpEvaluate, ps, params, b, tr, 0, &resp)
	}
	if err != nil {
		return 0, 0, err
	}
	if err := c.checkCounts("evaluate", &resp, b.N, len(data), 0); err != nil {
		return 0, 0, err
	}
	correct := int64(0)
	if resp.Correct != nil {
		correct = *resp.Correct
	}
	if correct < 0 || correct > int64(b.N) {
		return 0, 0, c.protocolError("evaluate", "correct = %d not in [0, %d]", correct, b.N)
	}
	return *resp.LossSum, int(correct), nil
}

// checkCounts checks what both batch answers share: the record count, a
// finite loss sum, and the payload size.
func (c *Client) checkCounts(op string, resp *wire.Response, n, floats, want int) error {
	switch {
	case resp.Count == nil || *resp.Count != int64(n):
		return c.protocolError(op, "count = %s, want %d records", showInt(resp.Count), n)
	case resp.LossSum == nil || math.IsNaN(*resp.LossSum) || math.IsInf(*resp.LossSum, 0):
		return c.protocolError(op, "loss_sum missing or not finite")
	case floats != want:
		return c.protocolError(op, "%d floats in the answer, want %d", floats, want)
	}
	return nil
}

// callPipe sends a batch request through the pipe (callShm's twin) and
// reads its answer of want floats. A classifier's labels are checked as
// through shared memory (putRecords): the data's error, not the
// program's, and the stream stays intact.
func (c *Client) callPipe(ctx context.Context, op string, ps []model.ParamSpec, params [][]float32, b model.Batch, tr tableReq, want int, resp *wire.Response) ([]float32, error) {
	if err := checkLabels(b, c.classes); err != nil {
		return nil, &Error{Op: op, Err: err}
	}
	req, payload := batchRequest(op, ps, params, b, tr)
	return c.call(ctx, req, payload, resp, func() int { return want }, nil)
}

func batchRequest(op string, ps []model.ParamSpec, params [][]float32, b model.Batch, tr tableReq) (*wire.Request, [][]float32) {
	req := &wire.Request{Op: op, Inputs: b.Inputs, N: b.N, Params: tensorsOf(ps), Tables: tr.hs}
	payload := append([][]float32{b.X, b.Y}, params...)
	return req, append(payload, tr.payload...)
}

// declaredSize is how many initial values a declaration announces; -1
// (never a valid count) when a shape is bad or the total is over MaxParams.
func declaredSize(ts []wire.Tensor) int {
	total := 0
	for _, t := range ts {
		s := t.Size()
		if s == 0 || total+s > MaxParams {
			return -1
		}
		total += s
	}
	return total
}

func split(data []float32, ps []model.ParamSpec) [][]float32 {
	out := make([][]float32, len(ps))
	off := 0
	for j, p := range ps {
		out[j] = data[off : off+p.Size() : off+p.Size()]
		off += p.Size()
	}
	return out
}

func showInt(p *int64) string {
	if p == nil {
		return "missing"
	}
	return fmt.Sprint(*p)
}

// printable is s with what is not a printable character dropped, cut to
// max bytes: a program's words in a log line.
func printable(s string, max int) string {
	s = strings.Map(func(r rune) rune {
		if unicode.IsPrint(r) {
			return r
		}
		return -1
	}, s)
	if len(s) > max {
		s = strings.ToValidUTF8(s[:max], "")
	}
	return s
}
