package jobspec

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/gtrain/gtrain/model"
)

// KindRecommender is the built-in recommender (model.KindRecommender): an
// embedding table per id field of the records, pooled, and an MLP on top.
const KindRecommender = model.KindRecommender

// TableSpec tunes the embedding table of one id field (model.tables.FIELD).
// Zero values take the defaults: any 64-bit id, model.dim, and the job's
// optimizer.kind.
type TableSpec struct {
	// Vocab bounds the ids (0 <= id < vocab); 0: any 64-bit id.
	Vocab uint64 `yaml:"vocab" json:"vocab,omitempty"`
	Dim   int    `yaml:"dim" json:"dim,omitempty"`
	// Optimizer is the rows' update rule: sgd, adagrad or adam, lazily
	// per row (momentum has no lazy form that matches the dense rule).
	Optimizer string `yaml:"optimizer" json:"optimizer,omitempty"`
	// InitScale is the rows' initialiser: each value starts uniform in
	// ±InitScale, drawn from (seed, table, id); 0: the pservers' default
	// (pserver.DefaultInitScale, 0.05).
	InitScale float64 `yaml:"init_scale" json:"init_scale,omitempty"`
}

// IsRecommender reports whether the model is the built-in recommender.
func (m ModelSpec) IsRecommender() bool { return m.Kind == KindRecommender }

// RecSpec is the recommender in the model package's terms (Fields as
// pinned at submit; nil before).
func (m ModelSpec) RecSpec() model.RecSpec {
	dims := map[string]int{}
	for f, t := range m.Tables {
		if t.Dim != 0 {
			dims[f] = t.Dim
		}
	}
	return model.RecSpec{Fields: slices.Clone(m.Fields), Dim: m.Dim, Dims: dims, Inputs: m.Inputs,
		Hidden: slices.Clone(m.Hidden), Outputs: m.Outputs, Interaction: m.Interaction}
}

// TableOptimizer is the optimizer kind of field's rows.
func (s *Spec) TableOptimizer(field string) string {
	if k := s.Model.Tables[field].Optimizer; k != "" {
		return k
	}
	if d := s.Model.Declared; d != nil {
		for _, t := range d.Tables {
			if t.Name == field && t.Optimizer != "" {
				return t.Optimizer
			}
		}
	}
	return s.Optimizer.Kind
}

// EmbeddingTables are the job's embedding tables, whose rows the pservers
// hold: the built-in recommender's (one per id field), or those a program
// declared at submit; nil for a dense model.
func (s *Spec) EmbeddingTables() []model.RecTable {
	if s.Model.IsRecommender() {
		return s.Model.RecSpec().Tables()
	}
	var out []model.RecTable
	if d := s.Model.Declared; s.Model.IsProgram() && d != nil {
		for _, t := range d.Tables {
			out = append(out, model.RecTable{Field: t.Name, Dim: t.Dim})
		}
	}
	return out
}

// validateRecommender checks what needs no data: the table settings, and,
// once the id fields are known (pinned at submit), the whole model.
func (s *Spec) validateRecommender() *FieldError {
	if err := s.checkProgramFieldsUnused(); err != nil {
		return err
	}
	if s.Model.Dim < 0 {
		return fieldError("model.dim", fmt.Sprintf("must be > 0, got %d", s.Model.Dim), nil)
	}
	switch k := s.Model.Interaction; k {
	case "", model.InteractionConcat, model.InteractionDot:
	default:
		return fieldError("model.interaction", fmt.Sprintf("%q is not an interaction: want %s (the default) or %s", k, model.InteractionConcat, model.InteractionDot), nil)
	}
	for _, f := range slices.Sorted(maps.Keys(s.Model.Tables)) {
		t := s.Model.Tables[f]
		field := "model.tables." + f
		switch {
		case t.Dim < 0:
			return fieldError(field+".dim", fmt.Sprintf("must be > 0, got %d", t.Dim), nil)
		case t.Dim == 0 && s.Model.Dim == 0:
			return fieldError("model.dim", fmt.Sprintf("must be > 0: table %s sets no dim of its own", f), nil)
		case t.InitScale < 0 || math.IsNaN(t.InitScale) || math.IsInf(t.InitScale, 0):
			return fieldError(field+".init_scale", fmt.Sprintf("must be a finite number > 0 (rows start uniform in ±init_scale), got %v", t.InitScale), nil)
		}
		switch k := s.TableOptimizer(f); k {
		case OptimizerSGD, OptimizerAdagrad, OptimizerAdam:
		default:
			where := field + ".optimizer"
			if t.Optimizer == "" {
				where = "optimizer.kind"
			}
			return fieldError(where, fmt.Sprintf("%q cannot update table %s: want sgd, adagrad or adam, which update each row lazily (set %s.optimizer)", k, f, field), nil)
		}
	}
	if k := s.Optimizer.Kind; k == OptimizerMomentum {
		for _, f := range s.Model.Fields {
			if s.Model.Tables[f].Optimizer == "" {
				return fieldError("optimizer.kind", fmt.Sprintf("momentum cannot update the rows of id field %s: set model.tables.%s.optimizer to sgd, adagrad or adam", f, f), nil)
			}
		}
	}
	if len(s.Model.Fields) == 0 {
		if s.Model.Dim == 0 && len(s.Model.Tables) == 0 {
			return fieldError("model.dim", "is required for kind recommender: the dimension of each id field's rows", nil)
		}
		return nil // the fields come from the shards, at submit
	}
	return liftModelError(s.Model.RecSpec().Validate())
}

// checkIDFields pins the records' id fields (every shard must name the
// same ones) in model.fields and checks the model against them.
func (s *Spec) checkIDFields(field, file string, ids []string) *FieldError {
	if s.Model.IsProgram() {
		return s.pinProgramIDFields(field, file, ids)
	}
	if !s.Model.IsRecommender() {
		return nil
	}
	if len(ids) == 0 {
		return fieldError(field, fmt.Sprintf("the records in %s have no id fields: a recommender learns a table per id field (gctl data convert --format movielens, or csv with id columns)", file), nil)
	}
	if s.Model.Fields != nil && !slices.Equal(s.Model.Fields, ids) {
		return fieldError(field, fmt.Sprintf("the records in %s have the id fields %s, others have %s", file,
			strings.Join(ids, ", "), strings.Join(s.Model.Fields, ", ")), nil)
	}
	s.Model.Fields = slices.Clone(ids)
	return liftModelError(s.Model.RecSpec().Validate())
}

// checkVocab refuses a table whose fixed vocabulary the shard's ids
// overflow (the pservers would refuse those rows mid-job).
func (s *Spec) checkVocab(file string, si ShardInfo) *FieldError {
	if !s.Model.IsRecommender() || len(si.IDMax) != len(si.IDFields) {
		return nil
	}
	for i, f := range si.IDFields {
		if v := s.Model.Tables[f].Vocab; v > 0 && si.IDMax[i] >= v {
			return fieldError("model.tables."+f+".vocab", fmt.Sprintf("is %d, but the records in %s have %s ids up to %d: raise it above %d, or leave it out for any 64-bit id",
				v, file, f, si.IDMax[i], si.IDMax[i]), nil)
		}
	}
	return nil
}

// pinProgramIDFields pins a program's records' id fields (none in dense
// records) in model.fields: the tables its declare may name.
func (s *Spec) pinProgramIDFields(field, file string, ids []string) *FieldError {
	if s.Model.Fields != nil && !slices.Equal(s.Model.Fields, ids) {
		return fieldError(field, fmt.Sprintf("the records in %s have the id fields [%s], others have [%s]", file,
			strings.Join(ids, ", "), strings.Join(s.Model.Fields, ", ")), nil)
	}
	s.Model.Fields = slices.Clone(ids)
	return nil
}
