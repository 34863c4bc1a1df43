package pserver

import (
	"context"
	"fmt"

	"github.com/gtrain/gtrain/api"
	"github.com/gtrain/gtrain/coord"
	"github.com/gtrain/gtrain/program"
)

// declareProgram runs the job's model program once, when the model is kind
// program, for the initial values of the parameters: the program declares
// them for the job's seed, and StartForJob checks them against the SHA-256
// recorded at submit, so every pserver starts from the same values.
func (p *process) declareProgram(ctx context.Context) error {
	if !p.spec.Model.IsProgram() {
		return nil
	}
	c, d, err := program.StartForJob(ctx, p.spec, p.log.With("program", p.name))
	if err != nil {
		if program.IsProgramError(err) && ctx.Err() == nil {
			reason := fmt.Sprintf("%s: %v", p.name, err)
			if _, serr := coord.SetJobState(ctx, p.cli, p.cfg.Job, api.StateFailed, reason); serr != nil {
				p.log.Error("could not fail the job", "err", serr)
			}
			_ = coord.AppendEvent(ctx, p.cli, p.cfg.Job, reason)
		}
		return fmt.Errorf("pserver %d: %w", p.cfg.Index, err)
	}
	c.Close()
	p.programInit = d.Init
	return nil
}
