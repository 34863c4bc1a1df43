package master

import (
	"context"
	"fmt"
	"log/slog"
	"math"

	"github.com/gtrain/gtrain/api"
	"github.com/gtrain/gtrain/dataset"
	"github.com/gtrain/gtrain/internal/roleruntime"
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
	// FailJob fails the job when it fails.
	Program *program.Client
	FailJob func(ctx context.Context, err error)
	// Procs is the GOMAXPROCS the evaluation may use (0: as in force).
	Procs int
}

// EndPass implements Evaluator.
func (e *PassEvaluator) EndPass(ctx context.Context, pass int, step int64) (api.Metrics, error) {
	params := e.Layout.NewParams()
	// Any epoch: the evaluation of an abandoned epoch is discarded by the core.
	got, _, err := e.PS.Client().Pull(ctx, step, math.MaxInt64, params)
	if err != nil {
		return api.Metrics{}, fmt.Errorf("pass %d: read parameters: %w", pass, err)
	}
	var m api.Metrics
	if len(e.Test) > 0 {
		restore := roleruntime.Raise(e.Procs)
		loss, acc, err := e.evaluate(ctx, params)
		restore()
		if err != nil {
			return api.Metrics{}, fmt.Errorf("pass %d: evaluate: %w", pass, err)
		}
		m.TestLoss = &loss
		if e.Layout.Spec.Kind != model.KindLinear && e.Layout.Spec.Outputs > 1 {
			m.TestAccuracy = &acc
		}
	}
	if err := ctx.Err(); err != nil {
		return api.Metrics{}, err // rolled back meanwhile: this pass's model is not the surviving one
	}
	dir, err := model.WriteParams(e.ModelDir, pass, got, e.Layout.Spec, e.Layout.Params, params)
	if err != nil {
		return api.Metrics{}, fmt.Errorf("pass %d: write model: %w", pass, err)
	}
	if e.Log != nil {
		e.Log.Info("model written", "dir", dir, "step", got)
	}
	return m, nil
}

func (e *PassEvaluator) evaluate(ctx context.Context, params [][]float32) (loss, acc float64, err error) {
	if e.Program != nil {
		return evaluateProgram(ctx, e, params)
	}
	loss, acc = Evaluate(e.Layout.Model, params, e.Test)
	return loss, acc, nil
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
