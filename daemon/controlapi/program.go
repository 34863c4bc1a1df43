package controlapi

import (
	"context"
	"fmt"

	"github.com/gtrain/gtrain/api"
	"github.com/gtrain/gtrain/coord"
	"github.com/gtrain/gtrain/internal/sandbox"
	"github.com/gtrain/gtrain/jobspec"
	"github.com/gtrain/gtrain/program"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// declareProgram runs a program model's declare once, at submit (after
// confineSpec has confined the workspace): a program that cannot declare is
// refused like any bad spec (exit 2), and the declared parameters are
// recorded in the job so that the memory fit, placement and the pservers'
// blocks can use them. See package program for why here. The program runs
// as a child of the agent, in the node's sandbox (c.programs): the
// agent's process keeps only the checked client.
func (c *Server) declareProgram(ctx context.Context, req *api.SubmitJobRequest, spec *jobspec.Spec) error {
	if err := checkPackage(req, spec); err != nil {
		return err
	}
	if !spec.Model.IsProgram() {
		spec.Model.Declared = nil
		return nil
	}
	if err := c.checkProgramMemory(spec); err != nil {
		return err
	}
	fetch := func(context.Context) ([]byte, error) { return req.GetPackage(), nil }
	if err := program.DeclareForSubmit(ctx, spec, fetch, c.programs, c.log); err != nil {
		return &jobspec.FieldError{Field: "model.entry", Msg: fmt.Sprintf("the program could not declare its parameters: %v", err)}
	}
	return spec.Validate() // the memory fit and the parameter limit, now that the sizes are known
}

// checkProgramMemory refuses, on a node that isolates programs, a program
// job without resources.trainer.memory: it is the program's memory limit,
// and an unstated one would leave the operator's code only the default cap
// (sandbox.DefaultMemoryBytes) to hold it.
func (c *Server) checkProgramMemory(spec *jobspec.Spec) error {
	if c.programs.Mode != sandbox.Isolate || spec.Resources.Trainer.Memory != "" {
		return nil
	}
	return &jobspec.FieldError{Field: "resources.trainer.memory",
		Msg: "must be stated for a program job (model.kind program): it is the program's memory limit on this node, which isolates programs; e.g. resources: {trainer: {memory: 1Gi}}"}
}

// checkPackage matches an uploaded workspace with the spec that names it.
func checkPackage(req *api.SubmitJobRequest, spec *jobspec.Spec) error {
	pkg, sum := req.GetPackage(), spec.Model.Package
	switch {
	case len(pkg) == 0 && sum == "":
		return nil
	case len(pkg) == 0:
		return &jobspec.FieldError{Field: "model.package", Msg: "names an uploaded workspace, but the request carries none"}
	case sum == "" || !spec.Model.IsProgram():
		return &jobspec.FieldError{Field: "model.package", Msg: "a workspace was uploaded (--package) for a job that is not model.kind program"}
	case len(pkg) > program.MaxPackage:
		return &jobspec.FieldError{Field: "model.package", Msg: fmt.Sprintf("%d bytes, over the maximum of %d", len(pkg), program.MaxPackage)}
	case program.PackageSHA256(pkg) != sum:
		return &jobspec.FieldError{Field: "model.package", Msg: fmt.Sprintf("the upload has sha256 %s, the spec names %s", program.PackageSHA256(pkg), sum)}
	}
	return nil
}

// packageOps store an uploaded workspace with the job's record, in the
// same transaction.
func packageOps(req *api.SubmitJobRequest, spec *jobspec.Spec) []clientv3.Op {
	if len(req.GetPackage()) == 0 {
		return nil
	}
	return []clientv3.Op{clientv3.OpPut(coord.PackageKey(spec.Name), string(req.GetPackage()))}
}
