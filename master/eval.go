package master

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"math"
	"os"

	"github.com/gtrain/gtrain/api"
	"github.com/gtrain/gtrain/dataset"
	"github.com/gtrain/gtrain/internal/fileperm"
	"github.com/gtrain/gtrain/internal/roleruntime"
	"github.com/gtrain/gtrain/jobspec"
	"github.com/gtrain/gtrain/master/core"
	"github.com/gtrain/gtrain/model"
	"github.com/gtrain/gtrain/program"
	"github.com/gtrain/gtrain/pserver/client"
)

// evalBatch bounds the memory of one evaluation batch.
const evalBatch = 1024

// PassEvaluator reads the parameters from the pservers at the end of a pass,
// computes the test metrics and writes the model directory.
type PassEvaluator struct {
	Layout   *client.Layout
	PS       *client.Dynamic
	Test     []dataset.Example // nil: no test set
	ModelDir string
	Log      *slog.Logger
	// Program evaluates a model program's parameters (model.kind program);
	// FailJob is told each of its errors: it fails the job for a program's
	// error, and records a program's death (the Driver then stops this
	// master).
	Program *program.Client
	FailJob func(ctx context.Context, err error)
	// Procs is the GOMAXPROCS the evaluation may use (0: as in force).
	Procs int
	// Async: the pass's step is not waited for (see EndPass).
	Async bool
	// Optimizer is the job's: its state is kept with each pass's model,
	// for a warm start that asks for it (init_from.optimizer_state).
	Optimizer jobspec.OptimizerSpec
	// MkdirAll creates ModelDir before each write (nil: the writer does):
	// the job's confine.Roots.MkdirAll, which refuses a model directory
	// swapped for a symlink out of the job's roots since submit (the
	// instant between it and the write is not covered).
	MkdirAll func(dir string, perm os.FileMode) error
}

// EndPass implements Evaluator.
func (e *PassEvaluator) EndPass(ctx context.Context, pass int, step int64) (api.Metrics, error) {
	params := e.Layout.NewParams()
	state := make([][][]float32, e.Optimizer.Slots())
	for k := range state {
		state[k] = e.Layout.NewParams()
	}
	// An async pass is over once its tasks are reported, and a trainer
	// reports a task after its pushes were applied: the pservers hold the
	// pass's model whatever their step. Waiting for the master's step
	// would wait for ever on a pserver restarted from its checkpoint (its
	// step went back, and no push comes until the next pass).
	minStep := step
	if e.Async {
		minStep = 0
	}
	// Any epoch: the evaluation of an abandoned epoch is discarded by the core.
	got, _, err := e.PS.Client().PullState(ctx, minStep, math.MaxInt64, params, state)
	if err != nil {
		if client.PeerGone(err) {
			// A restarted pserver serves at a new address (its old one
			// may even answer Unimplemented); the retry reads the
			// published one, as a trainer does.
			if rerr := e.PS.Refresh(ctx); rerr != nil && e.Log != nil {
				e.Log.Debug("pservers not all back yet", "err", rerr)
			}
		}
		return api.Metrics{}, fmt.Errorf("pass %d: read parameters: %w", pass, err)
	}
	if what := nonFiniteParam(e.Layout.Params, params); what != "" {
		return api.Metrics{}, &DivergedError{What: what} // no model of NaNs is written
	}
	var m api.Metrics
	if len(e.Test) > 0 {
		restore := roleruntime.Raise(e.Procs)
		loss, acc, err := e.evaluate(ctx, params, minStep)
		restore()
		if err != nil {
			return api.Metrics{}, fmt.Errorf("pass %d: evaluate: %w", pass, err)
		}
		m.TestLoss = &loss
		if e.Layout.Spec.Kind != model.KindLinear && e.Layout.Spec.Outputs > 1 || e.Layout.Rec != nil && e.Layout.Rec.Spec().Outputs > 1 {
			m.TestAccuracy = &acc
		}
	}
	if err := ctx.Err(); err != nil {
		return api.Metrics{}, err // rolled back meanwhile: this pass's model is not the surviving one
	}
	tables, err := e.tableRows(ctx, minStep)
	if err != nil {
		return api.Metrics{}, fmt.Errorf("pass %d: read the embedding rows: %w", pass, err)
	}
	opt := &model.OptimizerState{Kind: e.Optimizer.Kind, Slots: state}
	if e.MkdirAll != nil {
		if err := e.MkdirAll(e.ModelDir, fileperm.Dir); err != nil {
			return api.Metrics{}, &ModelWriteError{Pass: pass, Dir: e.ModelDir, Err: err}
		}
	}
	dir, err := model.WriteParamsState(e.ModelDir, pass, got, e.Layout.Spec, e.Layout.Params, params, opt, tables)
	if err != nil {
		return api.Metrics{}, &ModelWriteError{Pass: pass, Dir: e.ModelDir, Err: err}
	}
	if e.Log != nil {
		e.Log.Info("model written", "dir", dir, "step", got)
	}
	return m, nil
}

func (e *PassEvaluator) evaluate(ctx context.Context, params [][]float32, step int64) (loss, acc float64, err error) {
	if e.Program != nil {
		return evaluateProgram(ctx, e, params, step)
	}
	if e.Layout.Rec != nil {
		return e.evaluateRecommender(ctx, params, step)
	}
	loss, acc = Evaluate(e.Layout.Model, params, e.Test)
	return loss, acc, nil
}

// tableRows is the embedding rows as of step of a model with tables (a
// recommender, a program that declared some), for the pass's model (nil
// for other models).
func (e *PassEvaluator) tableRows(ctx context.Context, step int64) ([]model.TableRows, error) {
	var out []model.TableRows
	for _, t := range e.Layout.Tables {
		ids, vals, err := e.PS.Client().ExportRows(ctx, t.Field, t.Dim, step, math.MaxInt64)
		if err != nil {
			return nil, err
		}
		out = append(out, model.TableRows{Name: t.Field, Dim: t.Dim, IDs: ids, Vals: vals})
	}
	return out, nil
}

// evaluateRecommender is Evaluate for the recommender: each batch's rows
// are pulled from the pservers (as of step, the pass's), then evaluated.
func (e *PassEvaluator) evaluateRecommender(ctx context.Context, params [][]float32, step int64) (meanLoss, accuracy float64, err error) {
	rec := e.Layout.Rec
	var b model.RecBatch
	var loss float64
	var correct int
	for lo := 0; lo < len(e.Test); lo += evalBatch {
		if err := e.pullRows(ctx, &b, e.Test[lo:min(lo+evalBatch, len(e.Test))], step); err != nil {
			return 0, 0, err
		}
		if err := rec.CheckBatch(b); err != nil {
			return 0, 0, err
		}
		l, c := rec.Evaluate(params, b)
		loss += l
		correct += c
	}
	n := float64(len(e.Test))
	return loss / n, float64(correct) / n, nil
}

// pullRows lays ex out in b for the layout's tables and pulls their rows
// as of step.
func (e *PassEvaluator) pullRows(ctx context.Context, b *model.RecBatch, ex []dataset.Example, step int64) error {
	dataset.ToTableBatch(b, ex, e.Layout.TableFields)
	if err := e.PS.Client().PullBatchRows(ctx, e.Layout.Tables, b, step, math.MaxInt64); err != nil {
		return fmt.Errorf("pull rows: %w", err)
	}
	return nil
}

// Evaluate returns the mean loss and the accuracy of params on examples.
func Evaluate(m model.Model, params [][]float32, examples []dataset.Example) (meanLoss, accuracy float64) {
	var loss float64
	var correct int
	for lo := 0; lo < len(examples); lo += evalBatch {
		b := dataset.ToBatch(examples[lo:min(lo+evalBatch, len(examples))])
		l, c := m.Evaluate(params, b)
		loss += l
		correct += c
	}
	n := float64(len(examples))
	return loss / n, float64(correct) / n
}

// DivergedError is a pass end whose parameters are not all finite: the job
// diverged (Core.PassDiverged), and no retry can mend it.
type DivergedError struct{ What string }

func (e *DivergedError) Error() string { return "training diverged: " + e.What }

// nonFiniteParam names the first parameter holding a NaN or an infinity
// ("parameter w holds nan"); "" when every value is finite.
func nonFiniteParam(specs []model.ParamSpec, params [][]float32) string {
	for j, p := range params {
		for _, v := range p {
			if f := float64(v); !core.Finite(f) {
				return fmt.Sprintf("parameter %s holds %s", specs[j].Name, core.FormatValue(f))
			}
		}
	}
	return ""
}

// ModelWriteError is a pass's model that could not be written (a full
// disk, a directory in the way): the pass end waits and retries, and the
// operator is told what to fix (Warning) in status and in an event.
type ModelWriteError struct {
	Pass int
	Dir  string
	Err  error
}

func (e *ModelWriteError) Error() string {
	return fmt.Sprintf("pass %d: write model to %s: %v", e.Pass, e.Dir, e.Err)
}

func (e *ModelWriteError) Unwrap() error { return e.Err }

// Warning is the operator's line: the cause without the temporary file
// names, what waits, and what to do.
func (e *ModelWriteError) Warning() string {
	cause := e.Err
	var pe *fs.PathError
	if errors.As(cause, &pe) {
		cause = pe.Err
	}
	return fmt.Sprintf("master cannot write the model of pass %d to %s: %v; training waits for it, retrying every %s: free space there or fix the directory",
		e.Pass, e.Dir, cause, evalRetry)
}
