package gtrainprog_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gtrain/gtrain/model"
	"github.com/gtrain/gtrain/program"
	"github.com/gtrain/gtrain/sdk/gtrainprog"
)

// TestGoExampleProgram builds examples/goprog with the SDK and talks to it
// through gtrain's own client, as a trainer would.
func TestGoExampleProgram(t *testing.T) {
	ws := t.TempDir()
	build := exec.Command("go", "build", "-o", filepath.Join(ws, "goprog"), "github.com/gtrain/gtrain/examples/goprog")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	dir, argv, err := program.ResolveEntry(ws, []string{"./goprog"})
	if err != nil {
		t.Fatal(err)
	}
	c, err := program.Start(program.Config{Argv: argv, Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	d, err := c.Declare(ctx, program.DeclareArgs{Seed: 3, Inputs: 2, Outputs: 3})
	if err != nil {
		t.Fatal(err)
	}
	if !c.Shared() {
		t.Fatal("the SDK did not accept shared memory")
	}
	builtin, err := model.New(model.Spec{Kind: model.KindSoftmax, Inputs: 2, Outputs: 3})
	if err != nil {
		t.Fatal(err)
	}
	b := model.Batch{N: 2, Inputs: 2, X: []float32{1, 2, -1, 0.5}, Y: []float32{2, 0}}
	got, want := builtin.Params(), [][]float32{make([]float32, 6), make([]float32, 3)}
	grads := [][]float32{make([]float32, 6), make([]float32, 3)}
	loss, err := c.Gradient(ctx, d.Params, d.Init, b, grads)
	if err != nil {
		t.Fatal(err)
	}
	wantLoss := builtin.Gradient(d.Init, b, want)
	if math.Abs(loss-wantLoss) > 1e-9 || len(got) != len(d.Params) {
		t.Fatalf("loss %v, built-in softmax %v", loss, wantLoss)
	}
	for j := range grads {
		for k := range grads[j] {
			if math.Abs(float64(grads[j][k]-want[j][k])) > 1e-5 {
				t.Fatalf("grad %d[%d] = %v, built-in %v", j, k, grads[j][k], want[j][k])
			}
		}
	}
	// Evaluate through shared memory, against a softmax computed here.
	params := [][]float32{{1, -1, 0.5, 0.2, 0.3, -0.4}, {0.1, 0, -0.1}}
	eb := model.Batch{N: 4, Inputs: 2, X: []float32{1, 2, -1, 0.5, 0, 0, 2, -1}, Y: []float32{0, 1, 2, 2}}
	wantEval, wantCorrect := softmaxEval(params, eb, 3)
	if wantCorrect != 2 {
		t.Fatalf("the test's batch has %d correct, want 2 (neither none nor all)", wantCorrect)
	}
	evalLoss, correct, err := c.Evaluate(ctx, d.Params, params, eb)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(evalLoss-wantEval) > 1e-9*math.Max(1, math.Abs(wantEval)) || correct != wantCorrect {
		t.Fatalf("evaluate: loss %v, %d correct; want %v, %d", evalLoss, correct, wantEval, wantCorrect)
	}
}

// softmaxEval is the loss sum and correct count of softmax regression
// (w inputs×classes row-major, then the bias) on b, computed in float64.
func softmaxEval(params [][]float32, b model.Batch, classes int) (float64, int) {
	w, bias := params[0], params[1]
	var loss float64
	correct := 0
	for r := 0; r < b.N; r++ {
		z := make([]float64, classes)
		best := 0
		for k := range z {
			z[k] = float64(bias[k])
			for i := 0; i < b.Inputs; i++ {
				z[k] += float64(b.X[r*b.Inputs+i]) * float64(w[i*classes+k])
			}
			if z[k] > z[best] {
				best = k
			}
		}
		var sum float64
		for _, v := range z {
			sum += math.Exp(v - z[best])
		}
		y := int(b.Y[r])
		loss += math.Log(sum) - (z[y] - z[best])
		if best == y {
			correct++
		}
	}
	return loss, correct
}

// probeEnv makes the test binary, started by a test as a model program,
// serve probe instead of running the tests (TestMain).
const probeEnv = "GTRAINPROG_TEST_PROBE=1"

func TestMain(m *testing.M) {
	if slices.Contains(os.Environ(), probeEnv) {
		if err := gtrainprog.Serve(probe{}); err != nil {
			fmt.Fprintln(os.Stderr, "probe:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// probeRefuses is the input at which probe answers an error: a value the
// trainer sends without a check of its own; at probePanics it panics (an
// index out of range).
const probeRefuses, probePanics = 42, 43

// probe is a model that declares one parameter, appends to the file "seen"
// of its working directory the op, Step and Seed of each batch it is
// handed, and refuses a batch whose first input is probeRefuses.
type probe struct{}

func (probe) Declare(c gtrainprog.Config) ([]gtrainprog.Param, error) {
	return []gtrainprog.Param{{Name: "w", Shape: []int{c.Inputs}, Init: make([]float32, c.Inputs)}}, nil
}

func (probe) record(op string, b gtrainprog.Batch) error {
	f, err := os.OpenFile("seen", os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	fmt.Fprintf(f, "%s %d %d", op, b.Step, b.Seed)
	if b.Labels != nil {
		fmt.Fprintf(f, " labels %v", b.Labels)
	}
	fmt.Fprintln(f)
	if err := f.Close(); err != nil {
		return err
	}
	if b.X[0] == probePanics {
		_ = b.X[b.N*b.Inputs+int(b.X[0])] // a model's bug
	}
	if b.X[0] == probeRefuses {
		return fmt.Errorf("probe refuses %s: first input is %d", op, probeRefuses)
	}
	return nil
}

func (p probe) Gradient(params [][]float32, b gtrainprog.Batch, grads [][]float32) (float64, error) {
	return 0, p.record("gradient", b)
}

func (p probe) Evaluate(params [][]float32, b gtrainprog.Batch) (float64, int, error) {
	return 0, 0, p.record("evaluate", b)
}

// startProbe starts the test binary as a program serving probe, in a
// workspace of its own, and declares it.
func startProbe(t *testing.T, pipe bool) (*program.Client, *program.Declaration, string) {
	t.Helper()
	c, d, ws := startProbeWith(t, pipe, 1)
	if c.Shared() == pipe {
		t.Fatalf("shared memory: %v, with the pipe asked for: %v", c.Shared(), pipe)
	}
	return c, d, ws
}

// startProbeWith starts and declares probe with outputs, through launch
// (argv before the test binary: none, or a launcher that execs it).
func startProbeWith(t *testing.T, pipe bool, outputs int, launch ...string) (*program.Client, *program.Declaration, string) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	ws := t.TempDir()
	c, err := program.Start(program.Config{Argv: append(launch, exe), Dir: ws, Env: []string{probeEnv}, Pipe: pipe})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	d, err := c.Declare(context.Background(), program.DeclareArgs{Seed: 3, Inputs: 2, Outputs: outputs})
	if err != nil {
		t.Fatal(err)
	}
	return c, d, ws
}

// lastSeen is the last line probe wrote to its "seen" file.
func lastSeen(t *testing.T, ws string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(ws, "seen"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	return lines[len(lines)-1]
}

// TestStepSeed checks that a gradient request's step number and seed reach
// the model as Batch.Step and Batch.Seed through shared memory, and are 0
// over the pipe and in an evaluate request, which carry none.
func TestStepSeed(t *testing.T) {
	ctx := context.Background()
	st := program.Step{Number: 1200, Seed: program.RequestSeed(3, 1200, 1)}
	if st.Seed < 1<<63 {
		st.Seed |= 1 << 63 // a seed a float64 or int64 would not carry
	}
	b := model.Batch{N: 2, Inputs: 2, X: []float32{1, 2, 3, 4}, Y: []float32{0.5, -0.5}}
	for _, tc := range []struct {
		name     string
		pipe     bool
		gradient string
	}{
		{"shm", false, fmt.Sprintf("gradient %d %d", st.Number, st.Seed)},
		{"pipe", true, "gradient 0 0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, d, ws := startProbe(t, tc.pipe)
			grads := [][]float32{make([]float32, 2)}
			if _, err := c.GradientAt(ctx, st, d.Params, d.Init, b, grads); err != nil {
				t.Fatal(err)
			}
			if got := lastSeen(t, ws); got != tc.gradient {
				t.Fatalf("the model saw %q, want %q", got, tc.gradient)
			}
			if _, _, err := c.Evaluate(ctx, d.Params, d.Init, b); err != nil {
				t.Fatal(err)
			}
			if got := lastSeen(t, ws); got != "evaluate 0 0" {
				t.Fatalf("the model saw %q, want %q", got, "evaluate 0 0")
			}
		})
	}
}

// TestModelError checks that an error a Model method returns reaches the
// trainer as the program's error answer, with the model's text, through
// shared memory and the pipe, for gradient and evaluate.
func TestModelError(t *testing.T) {
	ctx := context.Background()
	bad := model.Batch{N: 1, Inputs: 2, X: []float32{probeRefuses, 1}, Y: []float32{0}}
	for _, pipe := range []bool{false, true} {
		for _, op := range []string{"gradient", "evaluate"} {
			t.Run(fmt.Sprintf("pipe=%v/%s", pipe, op), func(t *testing.T) {
				c, d, _ := startProbe(t, pipe)
				var err error
				if op == "gradient" {
					_, err = c.Gradient(ctx, d.Params, d.Init, bad, [][]float32{make([]float32, 2)})
				} else {
					_, _, err = c.Evaluate(ctx, d.Params, d.Init, bad)
				}
				want := fmt.Sprintf("probe refuses %s: first input is %d", op, probeRefuses)
				if !errors.Is(err, program.ErrProgramSet) || !strings.Contains(err.Error(), want) {
					t.Fatalf("got %v, want the program's error answer %q", err, want)
				}
			})
		}
	}
}

// TestLabels checks that a classifier's labels reach the model as
// Batch.Labels through the pipe as through shared memory.
func TestLabels(t *testing.T) {
	b := model.Batch{N: 3, Inputs: 2, X: []float32{1, 2, 3, 4, 5, 6}, Y: []float32{2, 0, 1}}
	for _, pipe := range []bool{false, true} {
		c, d, ws := startProbeWith(t, pipe, 3)
		if _, err := c.Gradient(context.Background(), d.Params, d.Init, b, [][]float32{make([]float32, 2)}); err != nil {
			t.Fatal(err)
		}
		if got, want := lastSeen(t, ws), "gradient 0 0 labels [2 0 1]"; !strings.HasSuffix(got, "labels [2 0 1]") {
			t.Errorf("pipe %v: the model saw %q, want %q", pipe, got, want)
		}
	}
}

// TestModelPanic checks that a panic in a Model method is the program's
// error answer, which fails the job with its text, not a dead program,
// which gtrain would restart into the same bug until its crash budget is
// spent.
func TestModelPanic(t *testing.T) {
	bad := model.Batch{N: 1, Inputs: 2, X: []float32{probePanics, 1}, Y: []float32{0}}
	for _, pipe := range []bool{false, true} {
		c, d, _ := startProbe(t, pipe)
		_, err := c.Gradient(context.Background(), d.Params, d.Init, bad, [][]float32{make([]float32, 2)})
		if !errors.Is(err, program.ErrProgramSet) || program.IsCrash(err) || !strings.Contains(err.Error(), "panic in the model's gradient: runtime error: index out of range") {
			t.Fatalf("pipe %v: got %v, want the program's error answer naming the panic", pipe, err)
		}
	}
}

// TestClosedDescriptors checks that a program started through a launcher
// that closes the descriptors the trainer offered (3-5) answers version 1
// and trains through the pipe, instead of accepting shared memory it
// cannot map.
func TestClosedDescriptors(t *testing.T) {
	c, d, _ := startProbeWith(t, false, 1, "/bin/sh", "-c", `exec "$0" 3<&- 4<&- 5<&-`)
	if c.Shared() {
		t.Fatal("the program accepted shared memory without its descriptors")
	}
	b := model.Batch{N: 2, Inputs: 2, X: []float32{1, 2, 3, 4}, Y: []float32{0.5, -0.5}}
	if _, err := c.Gradient(context.Background(), d.Params, d.Init, b, [][]float32{make([]float32, 2)}); err != nil {
		t.Fatal(err)
	}
}
