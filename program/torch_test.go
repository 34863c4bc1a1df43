package program

import (
	"context"
	"math"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/gtrain/gtrain/internal/testing/torchtest"
	"github.com/gtrain/gtrain/jobspec"
	"github.com/gtrain/gtrain/model"
)

// startTorchCNN runs examples/program/torch_cnn.py (the PyTorch adapter)
// through the pipe or shared memory. It needs Debian's python3-torch, which
// CI installs: without it the test fails, it does not skip.
func startTorchCNN(t *testing.T, pipe bool) (*Client, *Declaration) {
	t.Helper()
	torchtest.Need(t)
	c := startEntry(t, "examples/program", []string{python, "torch_cnn.py"}, Config{Pipe: pipe})
	d, err := c.Declare(context.Background(), DeclareArgs{Seed: 3, Inputs: 784, Outputs: 10, Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	return c, d
}

// imageBatch is n pseudo-random 28x28 "images" with labels 0-9.
func imageBatch(n int) model.Batch {
	b := model.Batch{N: n, Inputs: 784, X: make([]float32, n*784), Y: make([]float32, n)}
	s := uint32(1)
	for i := range b.X {
		s = s*1664525 + 1013904223
		b.X[i] = float32(s>>24) / 255
	}
	for i := range b.Y {
		b.Y[i] = float32(i * 7 % 10)
	}
	return b
}

// TestTorchAdapter: the adapter declares the CNN's parameters the same way
// in every process, answers the same gradient sums bit for bit through
// shared memory and through the pipe, and evaluates sensibly; the sums are
// sums (twice the batch, twice the gradient).
func TestTorchAdapter(t *testing.T) {
	ctx := context.Background()
	pc, pd := startTorchCNN(t, true)
	sc, sd := startTorchCNN(t, false)
	if !sc.Shared() || pd.Record().InitSHA256 != sd.Record().InitSHA256 {
		t.Fatalf("shared %v; declarations %s and %s", sc.Shared(), pd.Record().InitSHA256, sd.Record().InitSHA256)
	}
	// It says where it computes: the CPU, unless torch sees a GPU.
	cuda, err := exec.Command(python, "-c", "import torch; print(torch.cuda.is_available())").Output()
	if err != nil {
		t.Fatal(err)
	}
	if want := "cpu"; strings.TrimSpace(string(cuda)) == "True" {
		if !strings.HasPrefix(pd.Device, "cuda:0 (") {
			t.Errorf("declared device %q with a GPU, want cuda:0 (NAME)", pd.Device)
		}
	} else if pd.Device != want || sd.Device != want {
		t.Errorf("declared devices %q and %q without a GPU, want %q", pd.Device, sd.Device, want)
	}
	names := []string{"1.weight", "1.bias", "4.weight", "4.bias", "8.weight", "8.bias"}
	for j, p := range sd.Params {
		if p.Name != names[j] {
			t.Fatalf("parameter %d is %q, want %q", j, p.Name, names[j])
		}
	}
	b := imageBatch(20)
	st := Step{Number: 4, Seed: RequestSeed(3, 4, 0)}
	pg, sg := zeros(pd.Params), zeros(sd.Params)
	ploss, err1 := pc.GradientAt(ctx, st, pd.Params, pd.Init, b, pg)
	sloss, err2 := sc.GradientAt(ctx, st, sd.Params, sd.Init, b, sg)
	if err1 != nil || err2 != nil || ploss != sloss {
		t.Fatalf("loss sums %v (%v) and %v (%v)", ploss, err1, sloss, err2)
	}
	sameBits(t, "torch through shared memory", pg, sg)
	if mean := ploss / float64(b.N); mean < 1.5 || mean > 3.5 {
		t.Errorf("mean loss %v at initialisation, want about ln 10", mean)
	}
	double := model.Batch{N: 40, Inputs: 784, X: append(append([]float32{}, b.X...), b.X...), Y: append(append([]float32{}, b.Y...), b.Y...)}
	dg := zeros(sd.Params)
	if _, err := sc.GradientAt(ctx, st, sd.Params, sd.Init, double, dg); err != nil {
		t.Fatal(err)
	}
	for k, v := range dg[5] {
		if math.Abs(float64(v-2*sg[5][k])) > 1e-4*math.Max(1, math.Abs(float64(v))) {
			t.Fatalf("bias gradient %d: %v for the batch twice, %v once: not a sum", k, v, sg[5][k])
		}
	}
	loss, correct, err := sc.Evaluate(ctx, sd.Params, sd.Init, b)
	if err != nil || math.Abs(loss-ploss) > 1e-3*ploss || correct < 0 || correct > b.N {
		t.Fatalf("evaluate: loss %v (gradient's %v), correct %d, %v", loss, ploss, correct, err)
	}
}

// TestTorchExampleSpec: the example job of the CNN parses, validates and
// names the program the adapter serves.
func TestTorchExampleSpec(t *testing.T) {
	s, err := jobspec.ParseFile(repoDir(t, "examples/fashion_mnist_torch_cnn.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	if _, argv, err := ResolveEntry(s.Model.Workspace, s.Model.EntryArgv()); err != nil || argv[1] != "torch_cnn.py" {
		t.Fatalf("entry %v: %v", argv, err)
	}
}

// TestTorchSeedAndBuffers: dropout follows the request's seed (the same
// seed gives the same bits, another seed another gradient), and a module
// with BatchNorm trains and evaluates on batch statistics.
func TestTorchSeedAndBuffers(t *testing.T) {
	torchtest.Need(t)
	c := startEntry(t, "program/testdata", []string{python, "torch_dropout.py"}, Config{})
	ctx := context.Background()
	d, err := c.Declare(ctx, DeclareArgs{Seed: 1, Inputs: 784, Outputs: 10, Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	b := imageBatch(8)
	grad := func(seed uint64) [][]float32 {
		g := zeros(d.Params)
		if _, err := c.GradientAt(ctx, Step{Number: 1, Seed: seed}, d.Params, d.Init, b, g); err != nil {
			t.Fatal(err)
		}
		return g
	}
	a, again, other := grad(11), grad(11), grad(12)
	sameBits(t, "the same seed", a, again)
	differ := false
	for k := range a[0] {
		differ = differ || a[0][k] != other[0][k]
	}
	if !differ {
		t.Fatal("another seed gave the same dropout")
	}
	if _, _, err := c.Evaluate(ctx, d.Params, d.Init, b); err != nil {
		t.Fatal(err)
	}
}

// TestTorchRows: the PyTorch adapter's Tables (nn.EmbeddingBag over the
// pulled rows) declare the tables and not their weights as parameters,
// answer one gradient per distinct row, the same bits through shared
// memory and the pipe, as sums (every record twice: twice the gradient).
func TestTorchRows(t *testing.T) {
	torchtest.Need(t)
	ctx := context.Background()
	start := func(pipe bool) (*Client, *Declaration) {
		c := startEntry(t, "examples/program", []string{python, "torch_recommender.py"}, Config{Pipe: pipe})
		d, err := c.Declare(ctx, DeclareArgs{Seed: 3, Inputs: 1, Outputs: 1, Hidden: []int{8}, Threads: 1, IDFields: []string{"user", "zip", "movie"}})
		if err != nil {
			t.Fatal(err)
		}
		return c, d
	}
	pc, pd := start(true)
	sc, sd := start(false)
	want := []jobspec.DeclaredTable{{Name: "user", Dim: 5}, {Name: "zip", Dim: 2}, {Name: "movie", Dim: 5}}
	// w0 takes user 5 + zip 2 + movie 5 pooled values, 1 dense feature and the user·movie dot.
	if !slices.Equal(pd.Tables, want) || !slices.Equal(sd.Tables, want) || len(pd.Params) != 4 || pd.Params[0].Name != "mlp.0.weight" || pd.Params[0].Shape[1] != 14 {
		t.Fatalf("declared tables %v and parameters %v, want tables %v and the MLP's 4 parameters, w0 of 14 inputs", pd.Tables, pd.Params, want)
	}
	grad := func(c *Client, d *Declaration, twice bool) ([][]float32, [][]float32) {
		b, rows := torchRowsBatch(twice)
		grads := zeros(d.Params)
		if c.Shared() {
			_, grads = c.Buffers()
			for _, g := range grads {
				clear(g)
			}
		}
		rg := [][]float32{make([]float32, len(rows[0].Rows)), make([]float32, len(rows[1].Rows)), make([]float32, len(rows[2].Rows))}
		if _, err := c.GradientRows(ctx, Step{Seed: 1}, d.Params, d.Init, b, rows, grads, rg); err != nil {
			t.Fatal(err)
		}
		out := make([][]float32, len(grads))
		for j := range grads {
			out[j] = slices.Clone(grads[j])
		}
		return out, rg
	}
	pg, prg := grad(pc, pd, false)
	sg, srg := grad(sc, sd, false)
	sameBits(t, "dense gradients", pg, sg)
	sameBits(t, "row gradients", prg, srg)
	_, trg := grad(sc, sd, true)
	nonzero := 0
	for i := range prg {
		for k, v := range prg[i] {
			if math.Abs(float64(trg[i][k]-2*v)) > 1e-5*(1+math.Abs(float64(v))) {
				t.Fatalf("table %d value %d: %v with every record twice, want 2 × %v", i, k, trg[i][k], v)
			}
			if v != 0 {
				nonzero++
			}
		}
	}
	if nonzero == 0 {
		t.Fatal("every row gradient is 0")
	}
	b, rows := torchRowsBatch(false)
	if _, _, err := pc.EvaluateRows(ctx, pd.Params, pd.Init, b, rows); err != nil {
		t.Fatal(err)
	}
}

// torchRowsBatch is 3 records with user, zip and movie ids and rows
// (every record twice when twice).
func torchRowsBatch(twice bool) (model.Batch, []model.RecField) {
	b := model.Batch{Inputs: 1}
	var user, zip, movie model.RecField
	for range 1 + btoi(twice) {
		for r, ids := range [][]uint64{{3, 8}, {8}, {}} {
			b.N++
			b.X, b.Y = append(b.X, float32(r)), append(b.Y, float32(r+1))
			user.Append(ids, nil)
			zip.Append([]uint64{uint64(100 + r)}, []float32{0.5})
			movie.Append([]uint64{uint64(7 * (r + 1))}, nil)
		}
	}
	for _, f := range []struct {
		f   *model.RecField
		dim int
	}{{&user, 5}, {&zip, 2}, {&movie, 5}} {
		f.f.SizeRows(f.dim)
		for i := range f.f.Rows {
			f.f.Rows[i] = float32(i%7)/10 - 0.3
		}
	}
	return b, []model.RecField{user, zip, movie}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// TestHelperKeepsFreedMemory: the Python helper's Channel sets glibc's
// malloc to keep freed blocks (keep_freed_memory: PyTorch's per-step
// activations page-faulted back every step without it) and glibc takes the
// three settings.
func TestHelperKeepsFreedMemory(t *testing.T) {
	script := `import io, gtrainprog as g
calls, orig = [], g.keep_freed_memory
g.keep_freed_memory = lambda: calls.append(orig())
g.Channel(io.BytesIO(), io.BytesIO())
print(calls)`
	cmd := exec.Command(python, "-c", script)
	cmd.Dir = repoDir(t, "examples/program")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if got := strings.TrimSpace(string(out)); got != "[True]" {
		t.Fatalf("keep_freed_memory calls from Channel: %s, want [True] (called once, glibc took the settings)", got)
	}
}
