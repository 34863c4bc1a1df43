package program

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/gtrain/gtrain/internal/sandbox"
	"github.com/gtrain/gtrain/jobspec"
)

func programSpec(t *testing.T, mode string) *jobspec.Spec {
	return &jobspec.Spec{Name: "p", Seed: 1, Model: jobspec.ModelSpec{Kind: jobspec.KindProgram, Inputs: 2, Outputs: 3,
		Entry: python + " bad.py " + mode, Workspace: repoDir(t, "program/testdata"), Timeout: "5s"}}
}

// TestDeclarationRecorded: the declaration made at submit is recorded, a
// deterministic program matches it on every later start, and one that is
// not is refused with ErrMismatch.
func TestDeclarationRecorded(t *testing.T) {
	ctx := context.Background()
	spec := programSpec(t, "ok")
	if err := DeclareForSubmit(ctx, spec, nil, sandbox.Policy{}, nil); err != nil {
		t.Fatal(err)
	}
	if d := spec.Model.Declared; d == nil || len(d.Params) != 2 || d.Params[0].Name != "w" || len(d.InitSHA256) != 64 {
		t.Fatalf("recorded %+v", spec.Model.Declared)
	}
	c, _, err := StartForJob(ctx, spec, 0, nil, sandbox.Policy{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	c.Close()

	spec = programSpec(t, "nondeterministic")
	if err := DeclareForSubmit(ctx, spec, nil, sandbox.Policy{}, nil); err != nil {
		t.Fatal(err)
	}
	if _, _, err := StartForJob(ctx, spec, 0, nil, sandbox.Policy{}, nil); !errors.Is(err, ErrMismatch) || !errors.Is(err, ErrProgram) {
		t.Fatalf("a second, different declaration: got %v, want ErrMismatch", err)
	}
}

// TestSubmitDeclareSeesNoGPU: the declare at submit, a child of the agent
// that sees every GPU of its node, sees none, while a role's program keeps
// the GPUs its role was pinned to.
func TestSubmitDeclareSeesNoGPU(t *testing.T) {
	t.Setenv("CUDA_VISIBLE_DEVICES", "0")
	spec := programSpec(t, "no-gpu")
	if err := DeclareForSubmit(context.Background(), spec, nil, sandbox.Policy{}, nil); err != nil {
		t.Fatalf("the submit's declare saw a GPU: %v", err)
	}
	if _, _, err := StartForJob(context.Background(), spec, 0, nil, sandbox.Policy{}, nil); err == nil || !strings.Contains(err.Error(), "sees GPUs") {
		t.Fatalf("a role's program with CUDA_VISIBLE_DEVICES=0: %v; want it to see the GPU", err)
	}
}
