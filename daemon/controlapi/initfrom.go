package controlapi

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/gtrain/gtrain/coord"
	"github.com/gtrain/gtrain/internal/jobdir"
	"github.com/gtrain/gtrain/jobspec"
	"github.com/gtrain/gtrain/model"
)

// resolveInitFrom finds the pass directory a warm start reads (another
// job's model, or init_from.dir, already confined), checks it (sha256 of
// every file, and every loaded parameter's shape against the job's) and
// pins it in init_from.resolved, so that every pserver reads the same
// model even when the other job writes a newer pass meanwhile.
func (c *Server) resolveInitFrom(ctx context.Context, spec *jobspec.Spec) error {
	f := &spec.InitFrom
	f.Resolved = ""
	if !f.IsSet() {
		return nil
	}
	dir := f.Dir
	if f.Job != "" {
		rec, _, err := coord.GetJobRecord(ctx, c.cli, f.Job)
		if errors.Is(err, coord.ErrNotFound) {
			return &jobspec.FieldError{Field: "init_from.job", Msg: fmt.Sprintf("there is no job %s; see gctl job list", f.Job)}
		}
		if err != nil {
			return err
		}
		dir = filepath.Join(jobdir.Model(c.dataDir, &rec.Spec), model.LatestLink)
		if f.Pass != nil {
			dir = filepath.Join(filepath.Dir(dir), model.PassDirName(*f.Pass))
		}
	}
	real, err := filepath.EvalSymlinks(dir)
	if err == nil {
		dir = real
	}
	man, _, err := model.ReadModel(dir)
	if err != nil {
		return &jobspec.FieldError{Field: initFromField(f), Msg: fmt.Sprintf(
			"cannot read the model: %v; a job's pass must have ended (see gctl job status), and a multi-node job's model must be on shared storage (checkpoint.dir)", err)}
	}
	want, err := spec.ParamSpecs()
	if err != nil {
		return err
	}
	if err := jobspec.CheckInitModel(*f, want, man.ParamSpecs(), dir); err != nil {
		return err
	}
	if err := jobspec.CheckInitOptimizer(*f, spec.Optimizer, man.Optimizer, dir); err != nil {
		return err
	}
	if err := jobspec.CheckInitTables(*f, spec.EmbeddingTables(), man.Tables, dir); err != nil {
		return err
	}
	if _, err := model.ReadTablesIn(os.ReadFile, dir, man, f.Loads); err != nil {
		return &jobspec.FieldError{Field: initFromField(f), Msg: fmt.Sprintf("cannot read the model's embedding tables: %v", err)}
	}
	if f.OptimizerState {
		if _, err := model.ReadOptimizerState(dir, man); err != nil {
			return &jobspec.FieldError{Field: "init_from.optimizer_state", Msg: fmt.Sprintf("cannot read the optimizer state: %v", err)}
		}
	}
	f.Resolved = dir
	return nil
}

func initFromField(f *jobspec.InitFromSpec) string {
	switch {
	case f.Dir != "":
		return "init_from.dir"
	case f.Pass != nil:
		return "init_from.pass"
	}
	return "init_from.job"
}
