package program

import (
	"cmp"
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/gtrain/gtrain/internal/testing/torchtest"
	"github.com/gtrain/gtrain/model"
	"golang.org/x/sys/unix"
)

// python is Debian's interpreter, which has numpy (CI installs python3-numpy).
const python = torchtest.Python

func repoDir(t *testing.T, rel string) string {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	dir, err := filepath.Abs(filepath.Join(filepath.Dir(file), "..", rel))
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// startEntry starts entry inside the workspace ws (relative to the
// repository) with cfg's other settings; the test's end closes it.
func startEntry(t *testing.T, ws string, entry []string, cfg Config) *Client {
	t.Helper()
	dir, argv, err := ResolveEntry(repoDir(t, ws), entry)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Argv, cfg.Dir = argv, dir
	c, err := Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func startBad(t *testing.T, mode string, timeout time.Duration) *Client {
	t.Helper()
	return startEntry(t, "program/testdata", []string{python, "bad.py", mode}, Config{Timeout: timeout})
}

func smallBatch() model.Batch {
	return model.Batch{N: 2, Inputs: 2, X: []float32{1, 2, 3, 4}, Y: []float32{0, 1}}
}

var badParams = []model.ParamSpec{{Name: "w", Shape: []int{2, 3}}, {Name: "b", Shape: []int{3}}}

// TestProgramThatStopsReading: a program that answered declare and then
// reads no more of its stdin cannot hold the role for ever: a request too
// big for the pipe's buffer (160 KB of records over the pipe) waits in its
// write, before the answer's timer starts; the write has the timeout too.
func TestProgramThatStopsReading(t *testing.T) {
	c := startBad(t, "noread", time.Second)
	d, err := c.Declare(context.Background(), DeclareArgs{Seed: 1, Inputs: 2, Outputs: 3})
	if err != nil {
		t.Fatal(err)
	}
	n := 20000
	b := model.Batch{N: n, Inputs: 2, X: make([]float32, 2*n), Y: make([]float32, n)}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second) // "for ever", for the test
	defer cancel()
	start := time.Now()
	_, err = c.Gradient(ctx, d.Params, d.Init, b, [][]float32{make([]float32, 6), make([]float32, 3)})
	took := time.Since(start)
	if !errors.Is(err, ErrTimeout) || !strings.Contains(err.Error(), "read no more of its stdin") || took > 10*time.Second {
		t.Fatalf("after %v: %v; want ErrTimeout saying the program reads no more of its stdin, after about the 1 s timeout", took, err)
	}
	if !IsProgramError(err) || IsCrash(err) {
		t.Errorf("%v: IsProgramError %v, IsCrash %v: a stuck program fails the job as a hung one does", err, IsProgramError(err), IsCrash(err))
	}
}

func TestMisbehavingPrograms(t *testing.T) {
	for _, tc := range []struct {
		mode    string
		want    error
		inText  string
		timeout time.Duration // 2 s if 0
	}{
		{"exit3", ErrExited, "exit status 3", 0},
		{"killed", ErrExited, "signal: killed", 0},
		// Its stdout closed 2.5 s before it died: a crash all the same.
		{"slow-death", ErrExited, "signal: killed", 5 * time.Second},
		// Killed 0.7 s before the timeout, its stdout held open by a
		// child 1 s longer (WaitDelay): a crash, not a timeout. Only
		// with a pidfd (Linux 5.3); without, it reads as a timeout.
		{"child-late", ErrExited, "signal: killed", 0},
		{"hang", ErrTimeout, "took over", 0},
		{"garbage", ErrProtocol, `non-protocol output on stdout ("Traceback (most recent call last):"); print diagnostics to stderr`, 0},
		{"wrong-shape", ErrProtocol, "announces 8 floats, want 9", 0},
		{"nan-count", ErrProtocol, "malformed", 0},
		{"wrong-count", ErrProtocol, "count = 3, want 2", 0},
		{"nan-grad", ErrProtocol, "NaN", 0},
		{"error", ErrProgramSet, "labels out of range", 0},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			if fd, err := unix.PidfdOpen(os.Getpid(), 0); err != nil && tc.mode == "child-late" {
				t.Skipf("no pidfd on this kernel (%v): a death within the timeout whose stdout stays open reads as a timeout", err)
			} else if err == nil {
				unix.Close(fd)
			}
			c := startBad(t, tc.mode, cmp.Or(tc.timeout, 2*time.Second))
			ctx := context.Background()
			d, err := c.Declare(ctx, DeclareArgs{Seed: 1, Inputs: 2, Outputs: 3})
			if err != nil {
				t.Fatal(err)
			}
			grads := [][]float32{make([]float32, 6), make([]float32, 3)}
			_, err = c.Gradient(ctx, d.Params, d.Init, smallBatch(), grads)
			if !errors.Is(err, tc.want) || !strings.Contains(err.Error(), tc.inText) {
				t.Fatalf("got %v, want %v containing %q", err, tc.want, tc.inText)
			}
			// A death is a crash (the role restarts); the rest fails the job.
			if crash := tc.want == ErrExited; IsProgramError(err) == crash || IsCrash(err) != crash {
				t.Fatalf("%v: IsProgramError %v, IsCrash %v", err, IsProgramError(err), IsCrash(err))
			}
			if tc.mode != "garbage" && !strings.Contains(err.Error(), "bad.py: "+tc.mode) {
				t.Errorf("the error lacks the program's stderr: %v", err)
			}
			for _, g := range grads {
				for _, v := range g {
					if v != 0 {
						t.Fatalf("gradients changed by a failed request: %v", grads)
					}
				}
			}
			if _, err2 := c.Gradient(ctx, d.Params, d.Init, smallBatch(), grads); err2 != err {
				t.Fatalf("a broken client answered again: %v", err2)
			}
		})
	}
}

// TestCancelWhileStdoutClosed: a role stopping while its program, stdout
// closed, has not exited yet returns at once with the context's error, not
// the program's failure at its request's deadline.
func TestCancelWhileStdoutClosed(t *testing.T) {
	c := startBad(t, "close-stdout", 8*time.Second)
	d, err := c.Declare(context.Background(), DeclareArgs{Seed: 1, Inputs: 2, Outputs: 3})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(300*time.Millisecond, cancel)
	start := time.Now()
	grads := [][]float32{make([]float32, 6), make([]float32, 3)}
	_, err = c.Gradient(ctx, d.Params, d.Init, smallBatch(), grads)
	if took := time.Since(start); !errors.Is(err, context.Canceled) || IsProgramError(err) || took > 3*time.Second {
		t.Fatalf("after %v: %v (program error %v); want context.Canceled at once", took.Round(time.Millisecond), err, IsProgramError(err))
	}
}

func TestDeclareFailures(t *testing.T) {
	for _, tc := range []struct{ mode, inText string }{
		{"declare-exit", "cannot import torch"},
		{"bad-name", `name "../w"`},
		{"huge", "over 536870912 values in all"},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			c := startBad(t, tc.mode, 5*time.Second)
			_, err := c.Declare(context.Background(), DeclareArgs{Seed: 1, Inputs: 2, Outputs: 3})
			if !errors.As(err, new(*Error)) || !strings.Contains(err.Error(), tc.inText) {
				t.Fatalf("got %v, want an error with %q", err, tc.inText)
			}
		})
	}
}

// TestMLPMatchesBuiltin runs the Python reference program and checks its
// declaration is deterministic and its gradients and evaluation agree with
// gtrain's built-in MLP at the same parameters.
func TestMLPMatchesBuiltin(t *testing.T) {
	ws := repoDir(t, "examples/program")
	start := func() (*Client, *Declaration) {
		dir, argv, err := ResolveEntry(ws, []string{python, "mlp.py"})
		if err != nil {
			t.Fatal(err)
		}
		c, err := Start(Config{Argv: argv, Dir: dir})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		d, err := c.Declare(context.Background(), DeclareArgs{Seed: 7, Inputs: 4, Outputs: 3, Hidden: []int{5}})
		if err != nil {
			t.Fatal(err)
		}
		return c, d
	}
	c, d := start()
	_, d2 := start()
	if d.Record().InitSHA256 != d2.Record().InitSHA256 {
		t.Fatal("the MLP's initial values differ between two runs with one seed")
	}
	builtin, err := model.New(model.Spec{Kind: model.KindMLP, Inputs: 4, Outputs: 3, Hidden: []int{5}})
	if err != nil {
		t.Fatal(err)
	}
	for j, p := range builtin.Params() {
		if p.Name != d.Params[j].Name || p.Size() != d.Params[j].Size() {
			t.Fatalf("param %d: program %v, built-in %v", j, d.Params[j], p)
		}
	}
	b := model.Batch{N: 3, Inputs: 4, X: []float32{1, -2, 0.5, 3, 0, 1, 1, -1, 2, 2, -0.5, 0}, Y: []float32{2, 0, 1}}
	got, want := zeros(d.Params), zeros(d.Params)
	loss, err := c.Gradient(context.Background(), d.Params, d.Init, b, got)
	if err != nil {
		t.Fatal(err)
	}
	wantLoss := builtin.Gradient(d.Init, b, want)
	if math.Abs(loss-wantLoss) > 1e-6*math.Max(1, math.Abs(wantLoss)) {
		t.Fatalf("loss sum %v, built-in %v", loss, wantLoss)
	}
	for j := range got {
		for k := range got[j] {
			if math.Abs(float64(got[j][k]-want[j][k])) > 1e-5 {
				t.Fatalf("grad %s[%d] = %v, built-in %v", d.Params[j].Name, k, got[j][k], want[j][k])
			}
		}
	}
	eloss, correct, err := c.Evaluate(context.Background(), d.Params, d.Init, b)
	bloss, bcorrect := builtin.Evaluate(d.Init, b)
	if err != nil || math.Abs(eloss-bloss) > 1e-6*math.Max(1, bloss) || correct != bcorrect {
		t.Fatalf("evaluate: %v %d %v, built-in %v %d", eloss, correct, err, bloss, bcorrect)
	}
}

func zeros(ps []model.ParamSpec) [][]float32 {
	out := make([][]float32, len(ps))
	for j, p := range ps {
		out[j] = make([]float32, p.Size())
	}
	return out
}

func TestPythonIsThere(t *testing.T) {
	if _, err := os.Stat(python); err != nil {
		t.Fatalf("%s is missing (CI installs python3 and python3-numpy): %v", python, err)
	}
}

// TestThreadsSizeTheProgramsLibraries: a program started for a trainer of
// N threads finds OPENBLAS_NUM_THREADS, OMP_NUM_THREADS and MKL_NUM_THREADS
// set to N before it loads them (an operator's own value is overridden:
// the trainer's cpu decides).
func TestThreadsSizeTheProgramsLibraries(t *testing.T) {
	t.Setenv("OMP_NUM_THREADS", "7")
	c, err := Start(Config{Argv: []string{"/bin/sh", "-c", "env >&2"}, Threads: 3})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-c.exited:
	case <-time.After(10 * time.Second):
		t.Fatal("the program did not end")
	}
	env := c.tail.String()
	for _, name := range blasThreadsEnv {
		if !strings.Contains(env, name+"=3\n") {
			t.Errorf("the program's environment lacks %s=3:\n%s", name, env)
		}
	}
	c.Close()
}
