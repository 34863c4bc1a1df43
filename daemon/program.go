package daemon

import (
	"context"
	"fmt"

	"github.com/gtrain/gtrain/jobspec"
	"github.com/gtrain/gtrain/program"
)

// declareProgram runs a program model's declare once, at submit (after
// confineSpec has confined the workspace): a program that cannot declare is
// refused like any bad spec (exit 2), and the declared parameters are
// recorded in the job so that the memory fit, placement and the pservers'
// blocks can use them. See package program for why here.
func (c *controlServer) declareProgram(ctx context.Context, spec *jobspec.Spec) error {
	if !spec.Model.IsProgram() {
		spec.Model.Declared = nil
		return nil
	}
	if err := program.DeclareForSubmit(ctx, spec, c.log); err != nil {
		return &jobspec.FieldError{Field: "model.entry", Msg: fmt.Sprintf("the program could not declare its parameters: %v", err)}
	}
	return spec.Validate() // the memory fit and the parameter limit, now that the sizes are known
}
