package jobspec

import (
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/gtrain/gtrain/model"
)

// KindProgram is the model kind of a user's program: the trainer runs
// model.entry inside model.workspace and asks it for gradient sums.
const KindProgram = model.KindProgram

// MaxProgramTimeout bounds model.timeout: a longer wait is a hang.
const MaxProgramTimeout = time.Hour

// Declared is what a program declared when the job was submitted: its
// parameters and the SHA-256 of their initial values (little-endian float32,
// in order). Every role that starts the program checks its declaration
// against this record, and the pservers cut their blocks from it.
type Declared struct {
	Params     []DeclaredParam `json:"params"`
	InitSHA256 string          `json:"init_sha256"`
	// Tables are the embedding tables it declared (none: a dense model).
	Tables []DeclaredTable `json:"tables,omitempty"`
}

// DeclaredTable is an embedding table a program declared: the rows of the
// records' id field Name, Dim values each, updated by Optimizer (the job's
// optimizer.kind when empty).
type DeclaredTable struct {
	Name      string `json:"name"`
	Dim       int    `json:"dim"`
	Optimizer string `json:"optimizer,omitempty"`
}

// ParamSpecs are the declared parameters as the model's (nil: none
// declared yet).
func (d *Declared) ParamSpecs() []model.ParamSpec {
	if d == nil {
		return nil
	}
	ps := make([]model.ParamSpec, 0, len(d.Params))
	for _, p := range d.Params {
		ps = append(ps, model.ParamSpec{Name: p.Name, Shape: p.Shape})
	}
	return ps
}

// DeclaredParam is one declared parameter tensor.
type DeclaredParam struct {
	Name  string `json:"name"`
	Shape []int  `json:"shape"`
}

var sha256Hex = regexp.MustCompile(`^[0-9a-f]{64}$`)

// IsProgram reports whether the model is a user's program.
func (m ModelSpec) IsProgram() bool { return m.Kind == KindProgram }

// ProgramTimeout is model.timeout as a duration; 0 when unset (the
// program package's default applies).
func (m ModelSpec) ProgramTimeout() (time.Duration, error) {
	if m.Timeout == "" {
		return 0, nil
	}
	d, err := time.ParseDuration(m.Timeout)
	if err != nil {
		return 0, fmt.Errorf("%q is not a duration such as 60s", m.Timeout)
	}
	if d <= 0 || d > MaxProgramTimeout {
		return 0, fmt.Errorf("%s is not in (0, %s]", d, MaxProgramTimeout)
	}
	return d, nil
}

// EntryArgv splits model.entry into the program and its arguments at white
// space (no shell, no quoting).
func (m ModelSpec) EntryArgv() []string { return strings.Fields(m.Entry) }

// validateProgram checks the fields of a program model that need no file
// system; the agent confines the workspace and resolves the entry in it.
func (s *Spec) validateProgram() *FieldError {
	m := s.Model
	switch {
	case len(m.EntryArgv()) == 0:
		return fieldError("model.entry", `is required for kind program: the command to run in the workspace, e.g. "/usr/bin/python3 model.py"`, nil)
	case m.Workspace == "" && m.Package == "":
		return fieldError("model.workspace", "is required for kind program: the directory holding the program (or upload one with gctl job start --package DIR)", nil)
	case m.Workspace != "" && m.Package != "":
		return fieldError("model.workspace", "and an uploaded package (--package) exclude each other: leave model.workspace out", nil)
	case m.Package != "" && !sha256Hex.MatchString(m.Package):
		return fieldError("model.package", fmt.Sprintf("%q is not a lowercase hex SHA-256", m.Package), nil)
	case m.Inputs < 0:
		return fieldError("model.inputs", fmt.Sprintf("must be >= 0 (0: records with id fields only, for a program that declares tables), got %d", m.Inputs), nil)
	case m.Outputs <= 0:
		return fieldError("model.outputs", fmt.Sprintf("must be > 0, got %d", m.Outputs), nil)
	}
	for i, h := range m.Hidden {
		if h <= 0 {
			return fieldError(fmt.Sprintf("model.hidden[%d]", i), fmt.Sprintf("must be > 0, got %d", h), nil)
		}
	}
	if _, err := m.ProgramTimeout(); err != nil {
		return fieldError("model.timeout", err.Error(), nil)
	}
	if m.Dim != 0 || len(m.Tables) != 0 {
		return fieldError("model.tables", "is for kind recommender only: a program declares its embedding tables in its declare answer (docs/program-protocol.md, Embedding tables)", nil)
	}
	return s.validateProgramTables()
}

// validateProgramTables checks the embedding tables the program declared
// at submit as model.tables are checked for the built-in recommender: an
// optimizer that updates rows lazily. Their rows re-shard like the
// recommender's (pserver.RecutRows), so any pserver bounds do.
func (s *Spec) validateProgramTables() *FieldError {
	if s.Model.Declared == nil || len(s.Model.Declared.Tables) == 0 {
		return nil
	}
	for _, t := range s.Model.Declared.Tables {
		switch k := s.TableOptimizer(t.Name); k {
		case OptimizerSGD, OptimizerAdagrad, OptimizerAdam:
		default:
			return fieldError("optimizer.kind", fmt.Sprintf("%q cannot update the rows of the program's table %s: want sgd, adagrad or adam, which update each row lazily (or declare the table with its own optimizer)", k, t.Name), nil)
		}
	}
	return nil
}

// checkProgramFieldsUnused rejects program fields on a built-in model, where
// they would be silently ignored.
func (s *Spec) checkProgramFieldsUnused() *FieldError {
	for _, f := range []struct{ field, v string }{
		{"model.entry", s.Model.Entry}, {"model.workspace", s.Model.Workspace}, {"model.timeout", s.Model.Timeout},
		{"model.package", s.Model.Package},
	} {
		if f.v != "" {
			return fieldError(f.field, fmt.Sprintf("is for kind %s only, not %s", KindProgram, s.Model.Kind), nil)
		}
	}
	return nil
}
