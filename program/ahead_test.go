package program

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gtrain/gtrain/internal/testing/torchtest"
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

// TestTorchAheadInFlight: a request sent ahead goes out while the one
// before is still computing (the trainer's next micro-batch), its records
// beside that one's, which the program still reads in its backward pass
// (the first convolution's weight gradient reads the records). Both
// answer what they answer one after the other, and the second writes no
// gradient before it is let go, after the first one's were read.
func TestTorchAheadInFlight(t *testing.T) {
	ctx := context.Background()
	c, d := startTorchCNN(t, false)
	params, grads := c.Buffers()
	for j := range params {
		copy(params[j], d.Init[j])
	}
	b1, b2 := imageBatch(20), imageBatch(24)
	for i := range b2.X {
		b2.X[i] = 1 - b2.X[i] // not b1's records
	}
	s1, s2 := Step{Number: 1, Seed: RequestSeed(3, 1, 0)}, Step{Number: 2, Seed: RequestSeed(3, 2, 0)}
	want := make([][][]float32, 2)
	for i, b := range []model.Batch{b1, b2} {
		if _, err := c.GradientAt(ctx, []Step{s1, s2}[i], d.Params, params, b, grads); err != nil {
			t.Fatal(err)
		}
		want[i] = cloneAll(grads)
	}

	first := make(chan struct{})
	var once sync.Once
	doneA := make(chan error, 1)
	go func() {
		_, err := c.GradientProgress(ctx, s1, d.Params, params, b1, grads, &model.Progress{Ready: func(int) { once.Do(func() { close(first) }) }})
		doneA <- err
	}()
	<-first // the first request is in its backward pass
	saved := make(chan struct{})
	doneB := make(chan error, 1)
	go func() {
		_, err := c.GradientProgress(ctx, s2, d.Params, params, b2, grads, &model.Progress{Await: func(int) bool { <-saved; return true }})
		doneB <- err
	}()
	if err := <-doneA; err != nil {
		t.Fatal(err)
	}
	gotA := cloneAll(grads)
	close(saved)
	if err := <-doneB; err != nil {
		t.Fatal(err)
	}
	sameBits(t, "the request answered while the next was in flight", gotA, want[0])
	sameBits(t, "the request sent while the one before computed", grads, want[1])
}

// TestAheadQueuedBehindAFailure: a request sent ahead, queued behind one
// whose program writes text on stdout instead of its answer, fails with
// that first failure (a protocol violation, not a crash of the program
// killed for it), the text quoted whole in both.
func TestAheadQueuedBehindAFailure(t *testing.T) {
	c := startEntry(t, "program/testdata", []string{python, "ahead_stdout.py"}, Config{Timeout: 5 * time.Second})
	ctx := context.Background()
	d, err := c.Declare(ctx, DeclareArgs{Seed: 1, Inputs: 2, Outputs: 3})
	if err != nil || !c.Ahead() {
		t.Fatalf("declare: ahead %v, %v", c.Ahead(), err)
	}
	params, grads := c.Buffers()
	errA := make(chan error, 1)
	go func() {
		_, err := c.GradientProgress(ctx, Step{}, d.Params, params, smallBatch(), grads, &model.Progress{})
		errA <- err
	}()
	time.Sleep(100 * time.Millisecond) // the first request is in the program
	_, errB := c.GradientProgress(ctx, Step{}, d.Params, params, smallBatch(), grads, &model.Progress{Await: func(int) bool { return true }})
	for what, err := range map[string]error{"the first request": <-errA, "the request queued behind": errB} {
		if !errors.Is(err, ErrProtocol) || !strings.Contains(fmt.Sprint(err), `("hello from print()")`) {
			t.Errorf("%s: %v; want a protocol violation quoting the text", what, err)
		}
	}
}

// TestTorchAdapterSumsAreAutograds: the adapter's gradient sums, its
// nn.Linear weights' computed after autograd's pass in bands of 256 rows
// (an MLP 784-1024-300-10: a band and a part), are plain autograd's for the
// MLP and the CNN: bit for bit where the OpenBLAS kernel gives a band the
// whole product's bits (Cooperlake, SkylakeX), within float rounding where
// it does not (Haswell, Zen), and the same bits for a second request.
func TestTorchAdapterSumsAreAutograds(t *testing.T) {
	torchtest.Need(t)
	for _, model := range []string{"mlp", "cnn"} {
		cmd := exec.Command(python, "adapter_bits.py", model)
		cmd.Dir = repoDir(t, "program/testdata")
		cmd.Env = append(os.Environ(), "OPENBLAS_NUM_THREADS=1", "PYTHONDONTWRITEBYTECODE=1")
		out, err := cmd.CombinedOutput()
		lines := strings.Split(strings.TrimSpace(string(out)), "\n")
		if err != nil || lines[len(lines)-1] != "ok" {
			t.Errorf("%s: %v\n%s", model, err, out)
		}
	}
}
