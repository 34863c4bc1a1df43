package trainer

import (
	"context"
	"fmt"
	"time"

	"github.com/gtrain/gtrain/coord"
	"github.com/gtrain/gtrain/internal/clock"
	"github.com/gtrain/gtrain/model"
	"github.com/gtrain/gtrain/program"
)

// startProgram starts the job's model program when the model is kind
// program; the trainer then asks it for every gradient. When the program
// speaks shared memory, the trainer's parameter and gradient buffers become
// the shared ones: pulls land where the program reads, and the program adds
// its sums where pushes read, with no copy on the way.
func (t *trainer) startProgram(ctx context.Context) error {
	if !t.spec.Model.IsProgram() {
		return nil
	}
	if err := program.CheckWorkspace(t.spec, t.roots.Check); err != nil {
		return fmt.Errorf("trainer: %w", err)
	}
	c, d, err := program.StartForJob(ctx, t.spec, t.jobRev, coord.PackageFetcher(t.cli, t.cfg.Job), t.cfg.Programs, t.log.With("program", t.cfg.Worker))
	if err != nil {
		return fmt.Errorf("trainer: %w", t.noteCrash(err))
	}
	t.prog = c
	if params, grads := c.Buffers(); params != nil {
		t.params, t.grads = params, grads
	}
	// device: where the program says it computes (a GPU of its
	// CUDA_VISIBLE_DEVICES, or the CPU); "" when it does not say.
	t.log.Info("model program started", "shared_memory", c.Shared(), "device", d.Device)
	return nil
}

func (t *trainer) closeProgram() {
	if t.prog != nil {
		t.prog.Close()
	}
}

// gradient accumulates the gradient sums of b into t.grads: the program's
// when there is one, else the built-in model's. Either tells progress (when
// not nil) as it computes: a program that accepted progress frames says
// which gradients are final before it answers, and releases the
// parameters with its answer.
func (t *trainer) gradient(b model.Batch, progress *model.Progress) (float64, error) {
	if t.prog == nil {
		if err := t.layout.Model.Spec().CheckBatch(b); err != nil {
			return 0, fmt.Errorf("trainer: bad records: %w", err)
		}
		return t.layout.Model.GradientProgress(t.params, b, t.grads, progress), nil
	}
	// A program's spec checks inputs and lengths only: the labels are the
	// program's to interpret.
	if err := t.layout.Spec.CheckBatch(b); err != nil {
		return 0, fmt.Errorf("trainer: bad records: %w", err)
	}
	var loss float64
	var err error
	if progress != nil && t.prog.Progress() {
		loss, err = t.prog.GradientProgress(context.Background(), t.progStep, t.layout.Params, t.params, b, t.grads, progress)
		if err == nil && progress.Stopped {
			return 0, nil // started ahead, and stopped before writing any gradient
		}
	} else {
		loss, err = t.prog.GradientAt(context.Background(), t.progStep, t.layout.Params, t.params, b, t.grads)
	}
	if err != nil {
		return 0, fmt.Errorf("trainer: %w", t.noteCrash(err))
	}
	// Every gradient is final with the answer (told or not), and the
	// program reads the parameters until it answers.
	progress.Finish(len(t.grads))
	return loss, nil
}

// noteCrash records a job event when the program died before answering (a
// signal, the OOM killer, an exit): the trainer then ends with the error and
// its agent restarts it against the crash budget, so the event is where the
// program's stderr tail stays visible.
func (t *trainer) noteCrash(err error) error {
	if program.IsCrash(err) {
		ctx, cancel := clock.WithTimeout(context.Background(), t.clock, 5*time.Second)
		defer cancel()
		what := fmt.Sprintf("%s: %v; the trainer restarts (counted against the crash budget)", t.cfg.Worker, err)
		if aerr := coord.AppendEvent(ctx, t.cli, t.cfg.Job, what); aerr != nil {
			t.log.Warn("cannot record the program's crash", "err", aerr)
		}
	}
	return err
}

// failJobForProgram fails the job when the model program failed: a restart
// would meet the same program, and training on around it could give a wrong
// model. The program's error and stderr tail become the job's reason.
func (t *trainer) failJobForProgram(ctx context.Context, err error) {
	coord.FailJob(ctx, t.cli, t.cfg.Job, fmt.Sprintf("%s: %v", t.cfg.Worker, err), t.log)
}
