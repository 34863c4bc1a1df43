package jobspec

import (
	"fmt"
	"slices"

	"github.com/gtrain/gtrain/model"
)

// InitFromSpec starts a job from a saved model instead of the seed's
// initialisation (docs/reference.md#warm-start): the model of another job's
// pass (Job, Pass) or a model directory (Dir: a pass directory written by a
// job, or a `gctl job model --format raw` export). Only names the
// parameters to load (default: all); the others keep the seed's values.
// Freeze names parameters the pservers never update. The zero value means
// "start from the seed".
type InitFromSpec struct {
	Job string `yaml:"job" json:"job,omitempty"`
	// Pass is the other job's pass; nil means its newest model.
	Pass   *int     `yaml:"pass" json:"pass,omitempty"`
	Dir    string   `yaml:"dir" json:"dir,omitempty"`
	Only   []string `yaml:"only" json:"only,omitempty"`
	Freeze []string `yaml:"freeze" json:"freeze,omitempty"`
	// OptimizerState also loads the optimizer's state that the model keeps
	// (of the loaded parameters), and adam's step count: with the same
	// optimizer and data order, the job then trains exactly what the
	// model's own job trained after it.
	OptimizerState bool `yaml:"optimizer_state" json:"optimizer_state,omitempty"`
	// Resolved is the pass directory the agent that accepted the job found
	// and checked (never the user's: no YAML field; overwritten at submit).
	// The pservers read their initial values from it.
	Resolved string `yaml:"-" json:"resolved,omitempty"`
}

// IsSet reports whether the spec asks for a warm start.
func (f InitFromSpec) IsSet() bool {
	return f.Job != "" || f.Dir != "" || f.Pass != nil || len(f.Only) > 0 || len(f.Freeze) > 0 || f.OptimizerState
}

// Loads reports whether parameter name is loaded from the model.
func (f InitFromSpec) Loads(name string) bool {
	return len(f.Only) == 0 || slices.Contains(f.Only, name)
}

// Frozen reports whether the pservers must not update parameter name.
func (f InitFromSpec) Frozen(name string) bool { return slices.Contains(f.Freeze, name) }

func (s *Spec) validateInitFrom() *FieldError {
	f := s.InitFrom
	if !f.IsSet() {
		return nil
	}
	switch {
	case f.Job == "" && f.Dir == "":
		return fieldError("init_from", "names no model: give {job: NAME, pass: P} or {dir: MODEL_DIR}", nil)
	case f.Job != "" && f.Dir != "":
		return fieldError("init_from", "names both job and dir: give one", nil)
	case f.Dir != "" && f.Pass != nil:
		return fieldError("init_from.pass", "goes with init_from.job; a dir is one pass directory already", nil)
	case f.Pass != nil && (*f.Pass < 0 || *f.Pass > MaxPasses):
		return fieldError("init_from.pass", fmt.Sprintf("must be in [0, %d], got %d", MaxPasses, *f.Pass), nil)
	}
	if f.Job != "" {
		if err := ValidateName(f.Job); err != nil {
			return fieldError("init_from.job", err.Error(), err)
		}
		if f.Job == s.Name {
			return fieldError("init_from.job", "is this job itself; use `gctl job resume` to continue a job", nil)
		}
	}
	if len(f.Dir) > MaxPathLength {
		return fieldError("init_from.dir", fmt.Sprintf("is %d bytes, at most %d", len(f.Dir), MaxPathLength), nil)
	}
	names := s.paramNames()
	// only may name embedding tables too (their rows are loaded); freeze
	// may not: a table's rows are updated lazily, row by row.
	loadable := slices.Clone(names)
	if names != nil {
		for _, t := range s.EmbeddingTables() {
			loadable = append(loadable, t.Field)
		}
	}
	if err := knownParams("init_from.only", f.Only, loadable); err != nil {
		return err
	}
	for i, n := range f.Freeze {
		if slices.ContainsFunc(s.EmbeddingTables(), func(t model.RecTable) bool { return t.Field == n }) {
			return fieldError(fmt.Sprintf("init_from.freeze[%d]", i), fmt.Sprintf("names the embedding table %q: a table's rows cannot be frozen (they are updated row by row); leave it out (init_from.only loads it without freezing)", n), nil)
		}
	}
	return knownParams("init_from.freeze", f.Freeze, names)
}

// CheckInitTables checks a saved model's embedding tables against the
// job's: a table the job loads and the model holds must have the same
// dimension. A table the model lacks (no row of it was ever stored) starts
// from the seed.
func CheckInitTables(f InitFromSpec, want []model.RecTable, have []model.TableManifest, dir string) error {
	for _, w := range want {
		i := slices.IndexFunc(have, func(h model.TableManifest) bool { return h.Name == w.Field })
		if !f.Loads(w.Field) || i < 0 {
			continue
		}
		if have[i].Dim != w.Dim {
			return fieldError("init_from", fmt.Sprintf("embedding table %q has rows of dimension %d in the model at %s, this job's table wants %d; leave it out with init_from.only",
				w.Field, have[i].Dim, dir, w.Dim), nil)
		}
	}
	return nil
}

// paramNames lists the model's parameters; nil when not known before
// submit (a program declares its own).
func (s *Spec) paramNames() []string {
	var names []string
	ps, _ := s.ParamSpecs() // an invalid model has no names: its own field says why
	for _, p := range ps {
		names = append(names, p.Name)
	}
	return names
}

func knownParams(field string, list, names []string) *FieldError {
	for i, n := range list {
		at := fmt.Sprintf("%s[%d]", field, i)
		if n == "" {
			return fieldError(at, "is empty: give a parameter name", nil)
		}
		if slices.Contains(list[:i], n) {
			return fieldError(at, fmt.Sprintf("names %q twice", n), nil)
		}
		if names != nil && !slices.Contains(names, n) {
			return fieldError(at, fmt.Sprintf("the model has no parameter %q; its parameters are %v", n, names), nil)
		}
	}
	return nil
}

// CheckInitModel checks a saved model's parameters (names and shapes, in
// the manifest's order) against the job's own: every parameter the job
// loads must be there with the same shape. The error names the parameter.
func CheckInitModel(f InitFromSpec, want, have []model.ParamSpec, dir string) error {
	for _, w := range want {
		if !f.Loads(w.Name) {
			continue
		}
		i := slices.IndexFunc(have, func(h model.ParamSpec) bool { return h.Name == w.Name })
		if i < 0 {
			return fieldError("init_from", fmt.Sprintf("parameter %q is not in the model at %s (it has %s); list the ones to load in init_from.only",
				w.Name, dir, paramList(have)), nil)
		}
		if !slices.Equal(have[i].Shape, w.Shape) {
			return fieldError("init_from", fmt.Sprintf("parameter %q has shape %v in the model at %s, this job's model wants %v",
				w.Name, have[i].Shape, dir, w.Shape), nil)
		}
	}
	return nil
}

// CheckInitOptimizer checks, when f asks for the optimizer's state, that
// the model at dir keeps it (have) for the job's own optimizer kind: slots
// of another rule mean something else.
func CheckInitOptimizer(f InitFromSpec, opt OptimizerSpec, have *model.OptimizerManifest, dir string) error {
	switch {
	case !f.OptimizerState:
		return nil
	case have == nil:
		return fieldError("init_from.optimizer_state", fmt.Sprintf(
			"the model at %s keeps no optimizer state (written before gtrain kept it, or an export); drop optimizer_state to load its parameters only", dir), nil)
	case have.Kind != opt.Kind:
		return fieldError("init_from.optimizer_state", fmt.Sprintf(
			"the model at %s was trained with optimizer %s, this job uses %s: its state cannot carry over; use optimizer.kind %s, or drop optimizer_state",
			dir, have.Kind, opt.Kind, have.Kind), nil)
	case len(have.Slots) != opt.Slots():
		return fieldError("init_from.optimizer_state", fmt.Sprintf(
			"the model at %s keeps %d optimizer slots, optimizer %s needs %d", dir, len(have.Slots), opt.Kind, opt.Slots()), nil)
	}
	return nil
}

func paramList(ps []model.ParamSpec) string {
	var out []string
	for _, p := range ps {
		out = append(out, fmt.Sprintf("%s %v", p.Name, p.Shape))
	}
	return fmt.Sprint(out)
}
