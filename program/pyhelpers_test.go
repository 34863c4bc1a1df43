package program

import (
	"context"
	"errors"
	"fmt"
	"github.com/gtrain/gtrain/model"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gtrain/gtrain/internal/testing/torchtest"
)

// The tests of the Python helpers' own checks (examples/program/gtrainprog.py
// and gtrainprog_torch.py): each writes a small program into a temporary
// workspace that imports the helpers from examples/program.

// startHelperProgram writes src as prog.py into a fresh workspace and
// starts it with args; the caller closes the client (its stderr tail is
// whole once Close returned).
func startHelperProgram(t *testing.T, src string, pipe bool, args ...string) *Client {
	t.Helper()
	ws := t.TempDir()
	head := fmt.Sprintf("import sys\nsys.path.insert(0, %q)\n", repoDir(t, "examples/program"))
	if err := os.WriteFile(filepath.Join(ws, "prog.py"), []byte(head+src), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := Start(Config{Argv: append([]string{python, "prog.py"}, args...), Dir: ws, Pipe: pipe})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

const helperGradsProg = `
import numpy as np
import gtrainprog
mode = sys.argv[1]

class M:
    def declare(self, seed, inputs, outputs, hidden):
        return [("w", (inputs, outputs), np.zeros((inputs, outputs), np.float32)),
                ("b", (outputs,), np.zeros((outputs,), np.float32))]
    def gradient(self, params, x, y):
        w, b = np.ones_like(params[0]), np.ones_like(params[1])
        if mode == "few":    # forgets the bias
            return [w], 0.5
        if mode == "many":
            return [w, b, b], 0.5
        if mode == "size":   # 5 and 4 values: the total (9) is right
            return [np.ones(5, np.float32), np.ones(4, np.float32)], 0.5
        return [w, b], 0.5
    def evaluate(self, params, x, y):
        return 0.0, 0

gtrainprog.serve(M())
`

// TestHelperGradientCount: gtrainprog.serve refuses a model's gradient
// that returns another number of arrays than declared parameters, or an
// array of another size, with an error answer naming the problem, through
// shared memory and the pipe alike, and writes no gradient; a right answer
// still goes through both.
func TestHelperGradientCount(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct{ mode, inText string }{
		{"few", "1 gradient arrays for 2 declared parameters (none for 'b' and on)"},
		{"many", "3 gradient arrays for 2 declared parameters"},
		{"size", "the gradient of parameter 'w' has 5 values (shape (5,)), want 6 (shape (2, 3))"},
		{"ok", ""},
	} {
		for _, pipe := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/pipe=%v", tc.mode, pipe), func(t *testing.T) {
				c := startHelperProgram(t, helperGradsProg, pipe, tc.mode)
				defer c.Close()
				d, err := c.Declare(ctx, DeclareArgs{Seed: 1, Inputs: 2, Outputs: 3})
				if err != nil {
					t.Fatal(err)
				}
				if c.Shared() == pipe {
					t.Fatalf("shared memory %v through the pipe %v", c.Shared(), pipe)
				}
				grads := [][]float32{make([]float32, 6), make([]float32, 3)}
				_, err = c.Gradient(ctx, d.Params, d.Init, smallBatch(), grads)
				if tc.inText == "" {
					if err != nil {
						t.Fatal(err)
					}
					for j, g := range grads {
						for k, v := range g {
							if v != 1 {
								t.Fatalf("gradient %d[%d] = %v, want 1", j, k, v)
							}
						}
					}
					return
				}
				if !errors.Is(err, ErrProgramSet) || !IsProgramError(err) || !strings.Contains(err.Error(), tc.inText) {
					t.Fatalf("got %v, want a program's error answer with %q", err, tc.inText)
				}
				for _, g := range grads {
					for _, v := range g {
						if v != 0 {
							t.Fatalf("gradients written by a refused answer: %v", grads)
						}
					}
				}
			})
		}
	}
}

const helperStepSeedProg = `
import numpy as np
import gtrainprog

class M:
    def declare(self, seed, inputs, outputs, hidden):
        return [("w", (inputs, outputs), np.zeros((inputs, outputs), np.float32))]
    def gradient(self, params, x, y, step=-1, seed=-1):
        return [np.zeros_like(params[0])], step * 1000 + seed % 997
    def evaluate(self, params, x, y, *, seed=-1):
        return float(seed), 0

gtrainprog.serve(M())
`

// TestHelperPassesStepAndSeed: gtrainprog.serve hands a model whose
// gradient and evaluate take step= and seed= keyword parameters the
// request's (shared memory), 0 through the pipe, which carries none, and
// says so on stderr there only; evaluate's are 0.
func TestHelperPassesStepAndSeed(t *testing.T) {
	ctx := context.Background()
	const warning = "gradient requests carry no step or seed"
	for _, pipe := range []bool{false, true} {
		t.Run(fmt.Sprintf("pipe=%v", pipe), func(t *testing.T) {
			c := startHelperProgram(t, helperStepSeedProg, pipe)
			d, err := c.Declare(ctx, DeclareArgs{Seed: 1, Inputs: 2, Outputs: 3})
			if err != nil {
				c.Close()
				t.Fatal(err)
			}
			want := float64(7*1000 + 123456%997)
			if pipe {
				want = 0
			}
			for i := 0; i < 2; i++ {
				loss, err := c.GradientAt(ctx, Step{Number: 7, Seed: 123456}, d.Params, d.Init, smallBatch(), [][]float32{make([]float32, 6)})
				if err != nil || loss != want {
					c.Close()
					t.Fatalf("loss %v (%v), want %v: step*1000 + seed%%997 as the model got them", loss, err, want)
				}
			}
			loss, _, err := c.Evaluate(ctx, d.Params, d.Init, smallBatch())
			if err != nil || loss != 0 {
				c.Close()
				t.Fatalf("evaluate: loss %v (%v), want the seed 0", loss, err)
			}
			c.Close()
			tail := c.tail.String()
			if n := strings.Count(tail, warning); n != btoi(pipe) {
				t.Fatalf("%d warnings %q on stderr, want %d: %q", n, warning, btoi(pipe), tail)
			}
		})
	}
}

const helperBufferProg = `
import torch, torch.nn.functional as F
from torch import nn
import gtrainprog_torch
mode = sys.argv[1]

class Count(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("seen", torch.zeros(()))
    def forward(self, x):
        if self.training:
            if mode == "inplace":
                self.seen.add_(1)
            elif mode == "replaced":
                self.seen = self.seen + 1
            elif mode == "same-values":
                self.seen = self.seen.clone()
            elif mode == "added":
                self.register_buffer("extra", torch.ones(()))
            elif mode == "removed":
                self.seen = None
        return x

def build(inputs, outputs, hidden):
    return nn.Sequential(nn.Linear(inputs, outputs), Count())

gtrainprog_torch.serve(build, lambda out, y: F.cross_entropy(out, y, reduction="none"))
`

// TestTorchBufferChecked: the PyTorch adapter refuses, with an error
// answer naming the buffer, a module that changes a buffer during a
// gradient request however it does: in place, replaced by another tensor
// (even of the same values), a buffer added or one removed; a module that
// leaves its buffer alone trains.
func TestTorchBufferChecked(t *testing.T) {
	torchtest.Need(t)
	ctx := context.Background()
	for _, tc := range []struct{ mode, inText string }{
		{"inplace", "changed the values of buffer '1.seen'"},
		{"replaced", "replaced buffer '1.seen' by another tensor"},
		{"same-values", "replaced buffer '1.seen' by another tensor"},
		{"added", "added buffer '1.extra'"},
		{"removed", "removed buffer '1.seen'"},
		{"none", ""},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			c := startHelperProgram(t, helperBufferProg, false, tc.mode)
			defer c.Close()
			d, err := c.Declare(ctx, DeclareArgs{Seed: 1, Inputs: 2, Outputs: 3, Threads: 1})
			if err != nil {
				t.Fatal(err)
			}
			for i := 0; i < 2; i++ {
				_, err = c.GradientAt(ctx, Step{Number: 1, Seed: 5}, d.Params, d.Init, smallBatch(), zeros(d.Params))
				if err != nil {
					break
				}
			}
			if tc.inText == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if !errors.Is(err, ErrProgramSet) || !strings.Contains(err.Error(), tc.inText) || !strings.Contains(err.Error(), "during a gradient request") {
				t.Fatalf("got %v, want an error answer with %q", err, tc.inText)
			}
		})
	}
}

const helperFrozenProg = `
import torch.nn.functional as F
from torch import nn
import gtrainprog_torch

def build(inputs, outputs, hidden):
    m = nn.Sequential(nn.Linear(inputs, 4), nn.ReLU(), nn.Linear(4, outputs))
    m[0].weight.requires_grad_(False)
    return m

gtrainprog_torch.serve(build, lambda out, y: F.cross_entropy(out, y, reduction="none"))
`

// TestTorchFrozenParameterRefused: a parameter with requires_grad=False
// fails declare with a message that names it and says what to do, not an
// AttributeError from inside the adapter.
func TestTorchFrozenParameterRefused(t *testing.T) {
	torchtest.Need(t)
	c := startHelperProgram(t, helperFrozenProg, false)
	defer c.Close()
	_, err := c.Declare(context.Background(), DeclareArgs{Seed: 1, Inputs: 2, Outputs: 3, Threads: 1})
	for _, want := range []string{"parameter '0.weight' has requires_grad=False", "does not support frozen parameters", "init_from.freeze", "register_buffer"} {
		if !errors.Is(err, ErrProgramSet) || !strings.Contains(err.Error(), want) {
			t.Fatalf("got %v, want a declare error with %q", err, want)
		}
	}
	if strings.Contains(err.Error(), "AttributeError") {
		t.Fatalf("the adapter broke instead of refusing: %v", err)
	}
}

// TestTorchPipeSeedWarning: through the pipe (protocol version 1: no seed
// in the requests) the PyTorch adapter says once on stderr that it seeds
// torch with 0 on every request; through shared memory it says nothing.
func TestTorchPipeSeedWarning(t *testing.T) {
	torchtest.Need(t)
	ctx := context.Background()
	const warning = "gradient requests carry no seed, so torch is seeded with 0 before every gradient"
	src, err := os.ReadFile(repoDir(t, "program/testdata/torch_dropout.py"))
	if err != nil {
		t.Fatal(err)
	}
	for _, pipe := range []bool{false, true} {
		t.Run(fmt.Sprintf("pipe=%v", pipe), func(t *testing.T) {
			c := startHelperProgram(t, string(src), pipe)
			d, err := c.Declare(ctx, DeclareArgs{Seed: 1, Inputs: 784, Outputs: 10, Threads: 1})
			if err != nil {
				c.Close()
				t.Fatal(err)
			}
			b := imageBatch(8)
			for i := 0; i < 3; i++ {
				if _, err := c.GradientAt(ctx, Step{Number: int64(i + 1), Seed: uint64(11 + i)}, d.Params, d.Init, b, zeros(d.Params)); err != nil {
					c.Close()
					t.Fatal(err)
				}
			}
			c.Close()
			tail := c.tail.String()
			if n := strings.Count(tail, warning); n != btoi(pipe) {
				t.Fatalf("%d warnings %q on stderr, want %d: %q", n, warning, btoi(pipe), tail)
			}
		})
	}
}

// declareInBuffers declares c's program (2 inputs, 3 outputs), checks
// that it accepted what accepted says (named by what), and returns the
// declaration and the client's own shared buffers, as a trainer uses
// them (not cleared between requests), the parameters at their initial
// values.
func declareInBuffers(t *testing.T, c *Client, what string, accepted func() bool) (*Declaration, [][]float32, [][]float32) {
	t.Helper()
	d, err := c.Declare(context.Background(), DeclareArgs{Seed: 1, Inputs: 2, Outputs: 3})
	if err != nil {
		t.Fatal(err)
	}
	if !accepted() {
		t.Fatalf("the program did not accept %s", what)
	}
	params, grads := c.Buffers()
	for j := range params {
		copy(params[j], d.Init[j])
	}
	return d, params, grads
}

// channelProg is a gtrainprog.Channel program that declares w (2×3) and
// b (3), zeros, accepting what opts (declare_answer's keywords) names, and
// answers each gradient request with gradient (Python under its elif).
func channelProg(opts, gradient string) string {
	return `
import numpy as np
import gtrainprog

ch = gtrainprog.Channel()
for req in ch.requests():
    if req.op == "declare":
        ch.answer(ch.declare_answer([("w", (2, 3)), ("b", (3,))], ` + opts + `), [np.zeros(9, np.float32)])
    elif req.op == "gradient":` + gradient
}

// onesAnswer answers a gradient with sums that read no parameter, 1 each,
// through answer_gradient.
const onesAnswer = `
        gtrainprog.answer_gradient(ch, req, [np.ones((2, 3), np.float32), np.ones(3, np.float32)], 0.0)
`

var helperOverwriteProg = channelProg("overwrite=True", onesAnswer)

// TestHelperAnswerUnderOverwrite: a program built on gtrainprog.Channel
// that accepted overwrite and answers with answer_gradient writes its sums
// over the grads file, which the trainer no longer clears: each request's
// gradient is its own sums (all 1 here), not the sum of every request's.
func TestHelperAnswerUnderOverwrite(t *testing.T) {
	ctx := context.Background()
	c := startHelperProgram(t, helperOverwriteProg, false)
	defer c.Close()
	d, params, grads := declareInBuffers(t, c, "overwrite", c.Overwrites)
	for i := 1; i <= 3; i++ {
		if _, err := c.GradientAt(ctx, Step{Number: int64(i)}, d.Params, params, smallBatch(), grads); err != nil {
			t.Fatal(err)
		}
		for j, g := range grads {
			for k, v := range g {
				if v != 1 {
					t.Fatalf("request %d: gradient %d[%d] = %v, want 1 (the model's sums)", i, j, k, v)
				}
			}
		}
	}
}

// TestHelperClosedDescriptors: a helper program started through a
// launcher that closes the descriptors the trainer offered (3-5) answers
// version 1 and trains through the pipe, instead of accepting shared
// memory and failing its first batch with a bad descriptor; so does one
// that opened files of its own since, which took those numbers.
func TestHelperClosedDescriptors(t *testing.T) {
	ctx := context.Background()
	for _, reopened := range []bool{false, true} {
		ws := t.TempDir()
		src := fmt.Sprintf("import sys\nsys.path.insert(0, %q)\n", repoDir(t, "examples/program"))
		if reopened {
			src += "keep = [open('/dev/null') for _ in range(3)]\n"
		}
		if err := os.WriteFile(filepath.Join(ws, "prog.py"), []byte(src+helperGradsProg), 0o644); err != nil {
			t.Fatal(err)
		}
		c, err := Start(Config{Argv: []string{"/bin/sh", "-c", `exec "$0" prog.py ok 3<&- 4<&- 5<&-`, python}, Dir: ws})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		d, err := c.Declare(ctx, DeclareArgs{Seed: 1, Inputs: 2, Outputs: 3})
		if err != nil {
			t.Fatal(err)
		}
		if c.Shared() {
			t.Fatalf("reopened %v: the program accepted shared memory without its descriptors", reopened)
		}
		grads := [][]float32{make([]float32, 6), make([]float32, 3)}
		if _, err := c.Gradient(ctx, d.Params, d.Init, smallBatch(), grads); err != nil {
			t.Fatalf("reopened %v: %v", reopened, err)
		}
	}
}

// aheadOpts accept requests sent ahead (and what they need).
const aheadOpts = "progress=True, overwrite=True, ahead=True"

var helperAheadProg = channelProg(aheadOpts, onesAnswer)

// TestHelperAnswerAhead: answer_gradient, for a Channel program that
// accepted requests sent ahead, writes no gradient before the request's
// go (the last push may still read them), and answers a request the
// trainer stops as stopped, having written nothing.
func TestHelperAnswerAhead(t *testing.T) {
	ctx := context.Background()
	c := startHelperProgram(t, helperAheadProg, false)
	defer c.Close()
	d, params, grads := declareInBuffers(t, c, "requests sent ahead", c.Ahead)
	fill := func(x float32) {
		for _, g := range grads {
			for i := range g {
				g[i] = x
			}
		}
	}
	fill(7)
	stop := &model.Progress{Await: func(j int) bool { return j == 0 }}
	if _, err := c.GradientProgress(ctx, Step{Number: 1}, d.Params, params, smallBatch(), grads, stop); err != nil || !stop.Stopped {
		t.Fatalf("stopped at its second parameter: stopped %v, %v", stop.Stopped, err)
	}
	for j, g := range grads {
		for k, v := range g {
			if v != 7 {
				t.Fatalf("a stopped request wrote gradient %d[%d] = %v", j, k, v)
			}
		}
	}
	var sawGo bool
	written := func() bool { return grads[0][0] != 7 }
	goOn := &model.Progress{Await: func(j int) bool {
		if j == -1 { // asked before go: nothing may be written yet
			sawGo = !written()
		}
		return true
	}}
	if _, err := c.GradientProgress(ctx, Step{Number: 2}, d.Params, params, smallBatch(), grads, goOn); err != nil || goOn.Stopped {
		t.Fatalf("let go: stopped %v, %v", goOn.Stopped, err)
	}
	if !sawGo {
		t.Error("gradients written before the request's go")
	}
	for j, g := range grads {
		for k, v := range g {
			if v != 1 {
				t.Fatalf("gradient %d[%d] = %v, want 1", j, k, v)
			}
		}
	}
}

var aheadIgnoresStopProg = channelProg(aheadOpts, `  # neither awaits its frames nor heeds a stop
        for g in req.grads:
            g.fill(1)
        ch.answer({"count": len(req.y), "loss_sum": 0.0})
        break
`)

// TestAheadAnswerAfterStop: a program that answers a request sent ahead
// as computed although the trainer stopped it (it never got its go, so it
// wrote its gradients while the last push may have read them) fails the
// job (ErrProtocol) instead of being taken as stopped.
func TestAheadAnswerAfterStop(t *testing.T) {
	ctx := context.Background()
	c := startHelperProgram(t, aheadIgnoresStopProg, false)
	defer c.Close()
	d, params, grads := declareInBuffers(t, c, "requests sent ahead", c.Ahead)
	stop := &model.Progress{Await: func(j int) bool { return false }}
	_, err := c.GradientProgress(ctx, Step{Number: 1}, d.Params, params, smallBatch(), grads, stop)
	if !errors.Is(err, ErrProtocol) || !strings.Contains(err.Error(), "a request sent ahead that the trainer stopped") {
		t.Fatalf("got %v (stopped %v), want ErrProtocol naming the stopped request", err, stop.Stopped)
	}
}

// stuckAheadProg accepts requests sent ahead for 2000 parameters, reads a
// gradient request and then no more of its stdin: the trainer's arrived
// frames (one a parameter) fill the pipe's buffer.
const stuckAheadProg = `
import time
import numpy as np
import gtrainprog

n = 2000
ch = gtrainprog.Channel()
for req in ch.requests():
    if req.op == "declare":
        h = ch.declare_answer([("p%d" % i, (1,)) for i in range(n)], progress=True, overwrite=True, ahead=True)
        ch.answer(h, [np.zeros(n, np.float32)])
    elif req.op == "gradient":
        print("stuck after reading the request", file=sys.stderr, flush=True)
        time.sleep(3600)
`

// TestAheadArrivalsStuck: a program stuck while the trainer writes the
// arrivals of a request sent ahead times out as a stuck program does
// (ErrTimeout: the job fails), not as a crash (the program killed by the
// timeout is not a death the trainer restarts into again).
func TestAheadArrivalsStuck(t *testing.T) {
	ws := t.TempDir()
	src := fmt.Sprintf("import sys\nsys.path.insert(0, %q)\n", repoDir(t, "examples/program")) + stuckAheadProg
	if err := os.WriteFile(filepath.Join(ws, "prog.py"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := Start(Config{Argv: []string{python, "prog.py"}, Dir: ws, Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	d, err := c.Declare(ctx, DeclareArgs{Seed: 1, Inputs: 2, Outputs: 3})
	if err != nil || !c.Ahead() {
		t.Fatalf("declare: %v, ahead %v", err, c.Ahead())
	}
	params, grads := c.Buffers()
	p := &model.Progress{Await: func(int) bool { return true }}
	_, err = c.GradientProgress(ctx, Step{Number: 1}, d.Params, params, smallBatch(), grads, p)
	if !errors.Is(err, ErrTimeout) || IsCrash(err) || !strings.Contains(err.Error(), "read no more of its stdin") {
		t.Fatalf("got %v (IsCrash %v), want ErrTimeout saying the program reads no more of its stdin", err, IsCrash(err))
	}
}
