package jobspec

import (
	"fmt"
	"math"
	"path/filepath"
	"strings"

	"github.com/gtrain/gtrain/model"
)

// Validate checks the spec without touching the file system and returns the
// first problem in YAML order as a *FieldError naming the field; nil if the
// spec can be run. Run ApplyDefaults first (Parse does), or the zero values
// of omitted fields are rejected. The data itself is checked by CheckData.
func (s *Spec) Validate() error {
	checks := []func() *FieldError{
		s.validateName,
		s.validateLimits,
		s.validateMode,
		func() *FieldError { return atLeastOne("trainers", s.Trainers) },
		func() *FieldError { return atLeastOne("pservers", s.Pservers) },
		s.validateBounds,
		func() *FieldError { return atLeastOne("passes", s.Passes) },
		func() *FieldError { return atLeastOne("batch_size", s.BatchSize) },
		s.validateGlobalBatch,
		s.validateModel,
		s.Optimizer.validate,
		s.Data.validate,
		s.Checkpoint.validate,
		func() *FieldError { return s.Resources.Trainer.validate("resources.trainer") },
		func() *FieldError { return s.Resources.Pserver.validate("resources.pserver") },
		s.validateMemoryFit,
		s.Restarts.validate,
		s.Stragglers.validate,
		s.validateParams, // after the memory fit, which names the request to change
		s.validateInitFrom,
		s.validateEnv,
	}
	for _, check := range checks {
		if err := check(); err != nil {
			return err
		}
	}
	return nil
}

func (s *Spec) validateName() *FieldError {
	if err := ValidateName(s.Name); err != nil {
		return fieldError("name", err.Error(), err)
	}
	return nil
}

func (s *Spec) validateMode() *FieldError {
	if s.Mode != ModeSync && s.Mode != ModeAsync {
		return fieldError("mode", fmt.Sprintf("must be %q or %q, got %q", ModeSync, ModeAsync, s.Mode), nil)
	}
	return nil
}

// validateModel defers to model.Spec.Validate, which owns the model rules,
// and lifts the field name it reports into a FieldError.
func (s *Spec) validateModel() *FieldError {
	if s.Model.Interaction != "" && !s.Model.IsRecommender() {
		return fieldError("model.interaction", fmt.Sprintf("is for kind %s only, not %s", KindRecommender, s.Model.Kind), nil)
	}
	if s.Model.IsProgram() {
		return s.validateProgram()
	}
	if s.Model.IsRecommender() {
		return s.validateRecommender()
	}
	if err := s.checkProgramFieldsUnused(); err != nil {
		return err
	}
	return liftModelError(s.Model.ToModel().Validate())
}

// liftModelError turns the model package's error, which names the field
// ("model.hidden[1]: ..."), into a FieldError; nil stays nil.
func liftModelError(err error) *FieldError {
	if err == nil {
		return nil
	}
	msg := strings.TrimSuffix(err.Error(), ": "+model.ErrInvalidSpec.Error())
	field, rest, ok := strings.Cut(msg, ": ")
	if !ok || !strings.HasPrefix(field, "model.") {
		return fieldError("model", msg, err)
	}
	return fieldError(field, rest, err)
}

func (o OptimizerSpec) validate() *FieldError {
	switch o.Kind {
	case OptimizerSGD, OptimizerMomentum, OptimizerAdagrad, OptimizerAdam:
	default:
		return fieldError("optimizer.kind", fmt.Sprintf("must be one of %s, %s, %s, %s, got %q",
			OptimizerSGD, OptimizerMomentum, OptimizerAdagrad, OptimizerAdam, o.Kind), nil)
	}
	if err := positive("optimizer.learning_rate", o.LearningRate); err != nil {
		return err
	}
	for _, f := range []struct {
		field string
		value float64
	}{{"optimizer.momentum", o.MomentumValue()}, {"optimizer.beta1", o.Beta1}, {"optimizer.beta2", o.Beta2}} {
		if !(f.value >= 0 && f.value < 1) {
			return fieldError(f.field, fmt.Sprintf("must be in [0, 1), got %v", f.value), nil)
		}
	}
	return positive("optimizer.epsilon", o.Epsilon)
}

func (d DataSpec) validate() *FieldError {
	if d.Train == "" {
		return fieldError("data.train", "is required: a glob of record shards, e.g. data/housing-train-*", nil)
	}
	if err := wellFormedGlob("data.train", d.Train); err != nil {
		return err
	}
	if d.Test != "" {
		if err := wellFormedGlob("data.test", d.Test); err != nil {
			return err
		}
	}
	return atLeastOne("data.chunks_per_task", d.ChunksPerTask)
}

func wellFormedGlob(field, pattern string) *FieldError {
	// Match checks the whole pattern's syntax without any file system access.
	if _, err := filepath.Match(pattern, ""); err != nil {
		return fieldError(field, fmt.Sprintf("malformed glob pattern %q: %v", pattern, err), err)
	}
	return nil
}

func (c CheckpointSpec) validate() *FieldError {
	if _, _, err := c.Interval(); err != nil {
		return fieldError("checkpoint.every", err.Error(), err)
	}
	return atLeastOne("checkpoint.keep", c.Keep)
}

func (r Resource) validate(field string) *FieldError {
	if !(r.CPU >= 0) || math.IsInf(r.CPU, 0) {
		return fieldError(field+".cpu", fmt.Sprintf("must be a finite number >= 0 (0 = not stated), got %v", r.CPU), nil)
	}
	if r.GPU < 0 || r.GPU > MaxRoleGPUs {
		return fieldError(field+".gpu", fmt.Sprintf("must be a whole number from 0 to %d (GPUs of one node one process gets), got %d", MaxRoleGPUs, r.GPU), nil)
	}
	n, err := r.MemoryBytes()
	if err != nil {
		return fieldError(field+".memory", err.Error(), err)
	}
	if n == 0 && r.Memory != "" {
		return fieldError(field+".memory", fmt.Sprintf("must be more than 0 bytes, got %q (leave it empty for not stated)", r.Memory),
			fmt.Errorf("%w %q: zero", ErrInvalidMemory, r.Memory))
	}
	return nil
}

func atLeastOne(field string, v int) *FieldError {
	if v < 1 {
		return fieldError(field, fmt.Sprintf("must be at least 1, got %d", v), nil)
	}
	return nil
}

func positive(field string, v float64) *FieldError {
	if !(v > 0) || math.IsInf(v, 0) {
		return fieldError(field, fmt.Sprintf("must be a finite number > 0, got %v", v), nil)
	}
	return nil
}
