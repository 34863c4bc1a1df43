package gtrainprog_test

import (
	"context"
	"math"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/gtrain/gtrain/model"
	"github.com/gtrain/gtrain/program"
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
	bad := model.Batch{N: 1, Inputs: 2, X: []float32{1, 1}, Y: []float32{7}}
	if _, _, err := c.Evaluate(ctx, d.Params, d.Init, bad); !program.IsProgramError(err) {
		t.Fatalf("a label out of range: got %v, want the program's error", err)
	}
}
