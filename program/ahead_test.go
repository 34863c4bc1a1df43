package program

import (
	"context"
	"math"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/gtrain/gtrain/model"
)

// TestTorchAhead: the adapter accepts requests sent ahead of their
// parameters. Sent while every parameter holds NaN, each written only
// when the trainer tells it arrived, the request answers the gradient of
// the same request sent with them in place, bit for bit, written over
// whatever the shared gradients held; stopped before its parameters are
// all there, it answers stopped having written nothing, and the next
// request is answered as before.
func TestTorchAhead(t *testing.T) {
	ctx := context.Background()
	c, d := startTorchCNN(t, false)
	if !c.Ahead() || !c.Overwrites() {
		t.Fatalf("the adapter accepted requests sent ahead %v, overwrite %v; want both", c.Ahead(), c.Overwrites())
	}
	params, grads := c.Buffers()
	b := imageBatch(20)
	st := Step{Number: 2, Seed: RequestSeed(3, 2, 0)}
	fill := func(v [][]float32, x float32) {
		for _, p := range v {
			for i := range p {
				p[i] = x
			}
		}
	}
	for j := range params {
		copy(params[j], d.Init[j])
	}
	fill(grads, 7)
	wantLoss, err := c.GradientAt(ctx, st, d.Params, params, b, grads)
	if err != nil {
		t.Fatal(err)
	}
	want := cloneAll(grads)

	fill(params, float32(math.NaN()))
	fill(grads, 7)
	var mu sync.Mutex
	var awaited []int
	p := &model.Progress{Await: func(j int) bool {
		mu.Lock()
		awaited = append(awaited, j)
		mu.Unlock()
		if j >= 0 {
			time.Sleep(2 * time.Millisecond) // the program waits for it
			copy(params[j], d.Init[j])
		}
		return true
	}}
	loss, err := c.GradientProgress(ctx, st, d.Params, params, b, grads, p)
	if err != nil || p.Stopped || loss != wantLoss {
		t.Fatalf("sent ahead: loss %v (want %v), stopped %v, %v", loss, wantLoss, p.Stopped, err)
	}
	sameBits(t, "the gradient sent ahead", grads, want)
	mu.Lock()
	if wantAwaits := []int{0, 1, 2, 3, 4, 5, -1}; !slices.Equal(awaited, wantAwaits) {
		t.Errorf("awaited %v, want %v", awaited, wantAwaits)
	}
	mu.Unlock()

	fill(grads, 7)
	stop := &model.Progress{Await: func(j int) bool { return j == 0 || j == 1 }}
	if _, err := c.GradientProgress(ctx, st, d.Params, params, b, grads, stop); err != nil || !stop.Stopped {
		t.Fatalf("stopped at parameter 2: stopped %v, %v", stop.Stopped, err)
	}
	for j, g := range grads {
		if i := slices.IndexFunc(g, func(x float32) bool { return x != 7 }); i >= 0 {
			t.Fatalf("stopped, the program wrote gradient %d of parameter %d (%v)", i, j, g[i])
		}
	}
	if loss, err := c.GradientAt(ctx, st, d.Params, params, b, grads); err != nil || loss != wantLoss {
		t.Fatalf("after a stopped request: loss %v (want %v), %v", loss, wantLoss, err)
	}
	sameBits(t, "the gradient after a stopped request", grads, want)
}

func cloneAll(v [][]float32) [][]float32 {
	out := make([][]float32, len(v))
	for j := range v {
		out[j] = slices.Clone(v[j])
	}
	return out
}
