package program

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gtrain/gtrain/model"
)

// startMLP runs the Python reference MLP (examples/program/mlp.py) through
// the pipe or, when offered and accepted, shared memory.
func startMLP(t *testing.T, pipe bool) (*Client, *Declaration) {
	t.Helper()
	c := startEntry(t, "examples/program", []string{python, "mlp.py"}, Config{Pipe: pipe})
	d, err := c.Declare(context.Background(), DeclareArgs{Seed: 5, Inputs: 6, Outputs: 4, Hidden: []int{7}, Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	if c.Shared() == pipe {
		t.Fatalf("pipe=%v, but Shared() = %v", pipe, c.Shared())
	}
	return c, d
}

// randomBatch is n records of 6 features with labels in [0, 4).
func randomBatch(n int, seed uint64) model.Batch {
	b := model.Batch{N: n, Inputs: 6, X: make([]float32, n*6), Y: make([]float32, n)}
	s := seed
	next := func() float32 {
		s = s*6364136223846793005 + 1442695040888963407
		return float32(int64(s>>33)%2000-1000) / 500
	}
	for i := range b.X {
		b.X[i] = next()
	}
	for i := range b.Y {
		b.Y[i] = float32(i % 4)
	}
	return b
}

// TestShmMatchesPipe: the same program answers the same gradients, bit for
// bit, and the same evaluation through shared memory as through the pipe,
// with the caller's buffers or the client's own (Buffers), over batches
// that grow (the records file is mapped again) and shrink.
func TestShmMatchesPipe(t *testing.T) {
	ctx := context.Background()
	pc, pd := startMLP(t, true)
	sc, sd := startMLP(t, false)
	if pd.Record().InitSHA256 != sd.Record().InitSHA256 {
		t.Fatal("the declarations differ between the pipe and shared memory")
	}
	sparams, sgrads := sc.Buffers()
	for j := range sparams {
		copy(sparams[j], sd.Init[j])
	}
	for i, n := range []int{3, 40, 5000, 17} {
		b := randomBatch(n, uint64(i))
		pg, own := zeros(pd.Params), zeros(sd.Params)
		ploss, err := pc.GradientAt(ctx, Step{Number: int64(i)}, pd.Params, pd.Init, b, pg)
		if err != nil {
			t.Fatal(err)
		}
		sloss, err := sc.GradientAt(ctx, Step{Number: int64(i)}, sd.Params, sd.Init, b, own)
		if err != nil {
			t.Fatal(err)
		}
		for _, g := range sgrads {
			clear(g)
		}
		aloss, err := sc.GradientAt(ctx, Step{Number: int64(i)}, sd.Params, sparams, b, sgrads)
		if err != nil {
			t.Fatal(err)
		}
		if ploss != sloss || ploss != aloss {
			t.Fatalf("batch of %d: loss sums %v (pipe), %v (shm), %v (shm, in place)", n, ploss, sloss, aloss)
		}
		sameBits(t, "shm", pg, own)
		sameBits(t, "shm in place", pg, sgrads)
		pl, pcorrect, err1 := pc.Evaluate(ctx, pd.Params, pd.Init, b)
		sl, scorrect, err2 := sc.Evaluate(ctx, sd.Params, sd.Init, b)
		if err1 != nil || err2 != nil || pl != sl || pcorrect != scorrect {
			t.Fatalf("evaluate: pipe %v %d %v, shm %v %d %v", pl, pcorrect, err1, sl, scorrect, err2)
		}
	}
}

func sameBits(t *testing.T, what string, want, got [][]float32) {
	t.Helper()
	for j := range want {
		for k := range want[j] {
			if math.Float32bits(want[j][k]) != math.Float32bits(got[j][k]) {
				t.Fatalf("%s: grad %d[%d] = %v, pipe %v", what, j, k, got[j][k], want[j][k])
			}
		}
	}
}

// TestOldProtocolProgram: a program written for version 1 ignores the
// offer of shared memory and keeps working over the pipe.
func TestOldProtocolProgram(t *testing.T) {
	c := startBad(t, "ok", 5*time.Second)
	ctx := context.Background()
	d, err := c.Declare(ctx, DeclareArgs{Seed: 1, Inputs: 2, Outputs: 3})
	if err != nil {
		t.Fatal(err)
	}
	if c.Shared() {
		t.Fatal("a version-1 program is said to use shared memory")
	}
	grads := zeros(d.Params)
	if _, err := c.Gradient(ctx, d.Params, d.Init, smallBatch(), grads); err != nil || grads[0][0] != 1 {
		t.Fatalf("gradient over the pipe: %v, %v", err, grads)
	}
}

// TestLabelsChecked: a classifier's label that is no class index (4 of 4
// classes, -1, 2.5) is refused before the program sees it, in gradient and
// evaluate requests, through shared memory and the pipe alike (numpy would
// have wrapped -1 to the last class and cut 2.5 to 2).
func TestLabelsChecked(t *testing.T) {
	ctx := context.Background()
	for _, pipe := range []bool{false, true} {
		c, d := startMLP(t, pipe)
		for _, label := range []float32{4, -1, 2.5} {
			b := randomBatch(4, 1)
			b.Y[2] = label
			want := fmt.Sprintf("record 2 has label %v, not a class index", label)
			_, err := c.Gradient(ctx, d.Params, d.Init, b, zeros(d.Params))
			if !errors.Is(err, ErrRecords) || !IsProgramError(err) || !strings.Contains(err.Error(), want) {
				t.Fatalf("pipe %v, gradient, label %v of 4 classes: %v", pipe, label, err)
			}
			_, _, err = c.Evaluate(ctx, d.Params, d.Init, b)
			if !errors.Is(err, ErrRecords) || !strings.Contains(err.Error(), want) {
				t.Fatalf("pipe %v, evaluate, label %v of 4 classes: %v", pipe, label, err)
			}
		}
	}
}

// TestShmChecks: the checks of the pipe hold on the shared buffer: a
// non-finite gradient the program added in place fails the job.
func TestShmChecks(t *testing.T) {
	ctx := context.Background()
	bad := startBad(t, "shm-nan-grad", 5*time.Second)
	d, err := bad.Declare(ctx, DeclareArgs{Seed: 1, Inputs: 2, Outputs: 3})
	if err != nil || !bad.Shared() {
		t.Fatalf("declare: %v, shared %v", err, bad.Shared())
	}
	grads := zeros(d.Params)
	_, err = bad.Gradient(ctx, d.Params, d.Init, smallBatch(), grads)
	if !errors.Is(err, ErrProtocol) || !strings.Contains(err.Error(), `gradient value 1 of "w" is NaN`) {
		t.Fatalf("a NaN in the shared gradients: %v", err)
	}
	sameBits(t, "after a refused answer", zeros(d.Params), grads)
}

// TestShmSealed: once sized, the params and grads files cannot be resized
// through a descriptor reopened read-write from /proc (what an unsandboxed
// program holding them could do), and the records file cannot shrink; the
// trainer grows the records file still. The files are 0600: a sandboxed
// program (another uid) cannot reopen them at all.
func TestShmSealed(t *testing.T) {
	s, err := newShm()
	if err != nil {
		t.Skipf("no memfd here: %v", err)
	}
	defer s.close()
	if err := s.size([]model.ParamSpec{{Name: "w", Shape: []int{4, 8}}}); err != nil {
		t.Fatal(err)
	}
	if err := s.growRecords(1 << 16); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		f    *os.File
		size int64
	}{{s.child[0], 0}, {s.child[0], 1 << 20}, {s.grads, 0}, {s.grads, 1 << 20}, {s.child[1], 0}} {
		rw, err := os.OpenFile(fmt.Sprintf("/proc/self/fd/%d", tc.f.Fd()), os.O_RDWR, 0)
		if err != nil {
			t.Fatal(err)
		}
		if err := rw.Truncate(tc.size); !errors.Is(err, syscall.EPERM) {
			t.Errorf("%s reopened read-write, truncated to %d: %v, want EPERM", tc.f.Name(), tc.size, err)
		}
		rw.Close()
	}
	if err := s.growRecords(1 << 18); err != nil {
		t.Errorf("the records file no longer grows: %v", err)
	}
	for _, f := range []*os.File{s.params, s.records, s.grads} {
		if fi, err := f.Stat(); err != nil || fi.Mode().Perm() != 0o600 {
			t.Errorf("%s: mode %v (%v), want 0600: another uid could reopen it read-write", f.Name(), fi.Mode(), err)
		}
	}
}

// TestShmResizedBeforeSeal: the program holds the grads file read-write
// and may shrink it between the trainer's sizing and its seal; the trainer
// then refuses the program (ErrProtocol) instead of mapping past the end
// of the file and dying of SIGBUS at its first touch.
func TestShmResizedBeforeSeal(t *testing.T) {
	s, err := newShm()
	if err != nil {
		t.Skipf("no memfd here: %v", err)
	}
	defer s.close()
	defer func(old func(*os.File)) { beforeSeal = old }(beforeSeal)
	beforeSeal = func(f *os.File) {
		if f == s.grads {
			if err := f.Truncate(0); err != nil { // as the program's descriptor 5 may
				t.Fatal(err)
			}
		}
	}
	err = s.size([]model.ParamSpec{{Name: "w", Shape: []int{4, 8}}})
	if !errors.Is(err, ErrProtocol) || !strings.Contains(err.Error(), "is 0 bytes once sealed, want 128: the program resized it") {
		t.Fatalf("got %v, want ErrProtocol saying the program resized the grads file", err)
	}
	if s.gradMap != nil {
		t.Error("the grads file was mapped")
	}
}
