package pserver

import (
	"context"
	"fmt"

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
	if err := program.CheckWorkspace(p.spec, p.roots.Check); err != nil {
		return fmt.Errorf("pserver %d: %w", p.cfg.Index, err)
	}
	c, d, err := program.StartForJob(ctx, p.spec, p.jobRev, coord.PackageFetcher(p.cli, p.cfg.Job), p.cfg.Programs, p.log.With("program", p.name))
	if err != nil {
		if program.IsProgramError(err) && ctx.Err() == nil {
			coord.FailJob(ctx, p.cli, p.cfg.Job, fmt.Sprintf("%s: %v", p.name, err), p.log)
		}
		return fmt.Errorf("pserver %d: %w", p.cfg.Index, err)
	}
	c.Close()
	p.programInit = d.Init
	return nil
}
