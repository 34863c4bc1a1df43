package master

import (
	"context"
	"fmt"

	"github.com/gtrain/gtrain/coord"
	"github.com/gtrain/gtrain/dataset"
	"github.com/gtrain/gtrain/model"
	"github.com/gtrain/gtrain/program"
)

// startProgram starts the job's model program for the end-of-pass
// evaluation when the model is kind program and there is a test set (the
// model files need no program). A failure fails the job.
func (l *leader) startProgram(ctx context.Context) (*program.Client, error) {
	if !l.job.spec.Model.IsProgram() || len(l.job.test) == 0 {
		return nil, nil
	}
	if err := program.CheckWorkspace(l.job.spec, l.job.roots.Check); err != nil {
		return nil, fmt.Errorf("master: %w", err)
	}
	c, _, err := program.StartForJob(ctx, l.job.spec, l.job.rev, coord.PackageFetcher(l.cli, l.cfg.Job), l.cfg.Programs, l.cfg.Log.With("program", "master"))
	if err != nil {
		l.programFailed(ctx, err)
		return nil, fmt.Errorf("master: %w", err)
	}
	return c, nil
}

// programFailed fails the job with a model program's error (a retry or a
// restart meets the same program), and records a job event when the program
// died before answering (a signal, the OOM killer, an exit): this master
// then ends and its agent restarts it against the crash budget (Driver's
// evaluate), and the event keeps the program's stderr tail visible.
func (l *leader) programFailed(ctx context.Context, err error) {
	if ctx.Err() != nil {
		return
	}
	switch {
	case program.IsProgramError(err):
		coord.FailJob(ctx, l.cli, l.cfg.Job, fmt.Sprintf("master: %v", err), l.cfg.Log, l.lead.Guard())
	case program.IsCrash(err):
		what := fmt.Sprintf("master: %v; the master restarts (counted against the crash budget)", err)
		if aerr := coord.AppendEvent(ctx, l.cli, l.cfg.Job, what); aerr != nil {
			l.cfg.Log.Warn("cannot record the program's crash", "err", aerr)
		}
	}
}

// evaluateProgram is Evaluate with the program computing the losses; a
// program with embedding tables gets each batch's rows as of step, pulled
// as for the recommender.
func evaluateProgram(ctx context.Context, e *PassEvaluator, params [][]float32, step int64) (meanLoss, accuracy float64, err error) {
	var loss float64
	var correct int
	var rb model.RecBatch
	for lo := 0; lo < len(e.Test); lo += evalBatch {
		ex := e.Test[lo:min(lo+evalBatch, len(e.Test))]
		b := dataset.ToBatch(ex)
		if len(e.Layout.Tables) > 0 {
			if err := e.pullRows(ctx, &rb, ex, step); err != nil {
				return 0, 0, err
			}
		}
		// Not cancelled with ctx (a rollback): a request cut short would
		// leave the program's stream out of step. The timeout still bounds it.
		l, c, err := e.Program.EvaluateRows(context.WithoutCancel(ctx), e.Layout.Params, params, b, rb.Fields)
		if err != nil {
			if e.FailJob != nil {
				e.FailJob(ctx, err)
			}
			return 0, 0, err
		}
		loss += l
		correct += c
	}
	n := float64(len(e.Test))
	return loss / n, float64(correct) / n, nil
}
