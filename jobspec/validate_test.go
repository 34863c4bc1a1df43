package jobspec

import (
	"errors"
	"math"
	"testing"

	"github.com/gtrain/gtrain/model"
)

func TestValidateRejectsEachRule(t *testing.T) {
	tests := []struct {
		name      string
		breakIt   func(s *Spec)
		field     string
		fragments []string
	}{
		{"bad name", func(s *Spec) { s.Name = "a_b" }, "name", []string{`"a_b"`, "no '_'"}},
		{"empty name", func(s *Spec) { s.Name = "" }, "name", []string{"empty"}},
		{"mode", func(s *Spec) { s.Mode = "lockstep" }, "mode", []string{`"lockstep"`, "sync", "async"}},
		{"trainers", func(s *Spec) { s.Trainers = -1 }, "trainers", []string{"at least 1", "-1"}},
		{"pservers", func(s *Spec) { s.Pservers = 0 }, "pservers", []string{"at least 1"}},
		{"passes", func(s *Spec) { s.Passes = -3 }, "passes", []string{"-3"}},
		{"batch_size", func(s *Spec) { s.BatchSize = -20 }, "batch_size", []string{"-20"}},
		{"model kind", func(s *Spec) { s.Model.Kind = "cnn" }, "model.kind", []string{`"cnn"`}},
		{"model kind missing", func(s *Spec) { s.Model.Kind = "" }, "model.kind", []string{"linear"}},
		{"model inputs", func(s *Spec) { s.Model.Inputs = 0 }, "model.inputs", nil},
		{"model outputs", func(s *Spec) { s.Model.Outputs = -1 }, "model.outputs", nil},
		{"softmax one class", func(s *Spec) { s.Model = ModelSpec{Kind: "softmax", Inputs: 4, Outputs: 1} }, "model.outputs", []string{"softmax"}},
		{"hidden for linear", func(s *Spec) { s.Model.Hidden = []int{4} }, "model.hidden", []string{"mlp"}},
		{"hidden size", func(s *Spec) { s.Model = ModelSpec{Kind: "mlp", Inputs: 4, Outputs: 3, Hidden: []int{8, 0}} }, "model.hidden[1]", nil},
		{"optimizer kind", func(s *Spec) { s.Optimizer.Kind = "lbfgs" }, "optimizer.kind", []string{`"lbfgs"`, "adam"}},
		{"learning rate negative", func(s *Spec) { s.Optimizer.LearningRate = -0.1 }, "optimizer.learning_rate", []string{"> 0"}},
		{"learning rate NaN", func(s *Spec) { s.Optimizer.LearningRate = math.NaN() }, "optimizer.learning_rate", nil},
		{"learning rate Inf", func(s *Spec) { s.Optimizer.LearningRate = math.Inf(1) }, "optimizer.learning_rate", nil},
		{"momentum 1", func(s *Spec) { s.Optimizer.Momentum = new(1.0) }, "optimizer.momentum", []string{"[0, 1)"}},
		{"momentum negative", func(s *Spec) { s.Optimizer.Momentum = new(-0.1) }, "optimizer.momentum", nil},
		{"beta1", func(s *Spec) { s.Optimizer.Beta1 = 1.5 }, "optimizer.beta1", nil},
		{"beta2", func(s *Spec) { s.Optimizer.Beta2 = -0.001 }, "optimizer.beta2", nil},
		{"epsilon", func(s *Spec) { s.Optimizer.Epsilon = -1e-8 }, "optimizer.epsilon", nil},
		{"train missing", func(s *Spec) { s.Data.Train = "" }, "data.train", []string{"required"}},
		{"train malformed", func(s *Spec) { s.Data.Train = "/data/[train" }, "data.train", []string{`"/data/[train"`}},
		{"test malformed", func(s *Spec) { s.Data.Test = "/data/[test" }, "data.test", nil},
		{"chunks_per_task", func(s *Spec) { s.Data.ChunksPerTask = -1 }, "data.chunks_per_task", nil},
		{"every unparsable", func(s *Spec) { s.Checkpoint.Every = "often" }, "checkpoint.every", []string{`"often"`}},
		{"every zero", func(s *Spec) { s.Checkpoint.Every = "0s" }, "checkpoint.every", []string{"positive"}},
		{"every zero steps", func(s *Spec) { s.Checkpoint.Every = "0" }, "checkpoint.every", nil},
		{"keep", func(s *Spec) { s.Checkpoint.Keep = -1 }, "checkpoint.keep", nil},
		{"trainer cpu", func(s *Spec) { s.Resources.Trainer.CPU = -1 }, "resources.trainer.cpu", nil},
		{"trainer memory", func(s *Spec) { s.Resources.Trainer.Memory = "lots" }, "resources.trainer.memory", []string{`"lots"`}},
		{"pserver cpu", func(s *Spec) { s.Resources.Pserver.CPU = math.NaN() }, "resources.pserver.cpu", nil},
		{"pserver memory", func(s *Spec) { s.Resources.Pserver.Memory = "512Q" }, "resources.pserver.memory", []string{`"Q"`}},
		{"trainer gpu negative", func(s *Spec) { s.Resources.Trainer.GPU = -1 }, "resources.trainer.gpu", []string{"0 to 64"}},
		{"pserver gpu huge", func(s *Spec) { s.Resources.Pserver.GPU = MaxRoleGPUs + 1 }, "resources.pserver.gpu", []string{"got 65"}},
		{"pserver memory zero", func(s *Spec) { s.Resources.Pserver.Memory = "0Mi" }, "resources.pserver.memory", []string{"more than 0"}},
		{"restarts limit", func(s *Spec) { s.Restarts.Limit = -1 }, "restarts.limit", []string{"between 1 and 1000"}},
		{"restarts limit huge", func(s *Spec) { s.Restarts.Limit = 1001 }, "restarts.limit", nil},
		{"restarts window", func(s *Spec) { s.Restarts.Window = "a minute" }, "restarts.window", []string{`"a minute"`}},
		{"restarts window negative", func(s *Spec) { s.Restarts.Window = "-1s" }, "restarts.window", []string{"positive"}},
		{"restarts window too long", func(s *Spec) { s.Restarts.Window = "25h" }, "restarts.window", []string{"at most 24h0m0s"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := validSpec(t)
			tt.breakIt(s)
			wantFieldError(t, s.Validate(), tt.field, tt.fragments...)
		})
	}
}

func TestValidateAcceptsTheBoundaries(t *testing.T) {
	tests := []struct {
		name  string
		setIt func(s *Spec)
	}{
		{"async", func(s *Spec) { s.Mode = ModeAsync }},
		{"softmax", func(s *Spec) { s.Model = ModelSpec{Kind: "softmax", Inputs: 784, Outputs: 10} }},
		{"mlp regression", func(s *Spec) { s.Model = ModelSpec{Kind: "mlp", Inputs: 13, Outputs: 1, Hidden: []int{16}} }},
		{"mlp classifier", func(s *Spec) { s.Model = ModelSpec{Kind: "mlp", Inputs: 784, Outputs: 10, Hidden: []int{128, 64}} }},
		{"momentum 0", func(s *Spec) {
			s.Optimizer = OptimizerSpec{Kind: "momentum", LearningRate: 0.1, Beta1: 0.9, Beta2: 0.999, Epsilon: 1e-8}
		}},
		{"adagrad", func(s *Spec) { s.Optimizer.Kind = OptimizerAdagrad }},
		{"adam", func(s *Spec) { s.Optimizer.Kind = OptimizerAdam }},
		{"no test set", func(s *Spec) { s.Data.Test = "" }},
		{"step interval", func(s *Spec) { s.Checkpoint.Every = "200" }},
		{"resources unstated", func(s *Spec) { s.Resources = ResourcesSpec{} }},
		{"63-character name", func(s *Spec) { s.Name = longName(63) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := validSpec(t)
			tt.setIt(s)
			if err := s.Validate(); err != nil {
				t.Errorf("Validate: %v", err)
			}
		})
	}
}

func TestValidateReturnsTheFirstErrorInYAMLOrder(t *testing.T) {
	s := validSpec(t)
	s.Resources.Pserver.Memory = "bad"
	s.Checkpoint.Keep = -1
	s.Optimizer.Epsilon = -1
	s.Model.Inputs = -1
	s.Trainers = -1
	order := []struct {
		field string
		fix   func()
	}{
		{"trainers", func() { s.Trainers = 1 }},
		{"model.inputs", func() { s.Model.Inputs = 1 }},
		{"optimizer.epsilon", func() { s.Optimizer.Epsilon = 1e-8 }},
		{"checkpoint.keep", func() { s.Checkpoint.Keep = 1 }},
		{"resources.pserver.memory", func() { s.Resources.Pserver.Memory = "" }},
	}
	for _, step := range order {
		wantFieldError(t, s.Validate(), step.field)
		step.fix()
	}
	if err := s.Validate(); err != nil {
		t.Errorf("after fixing every field: %v", err)
	}
}

func TestValidateKeepsTheCauseCheckable(t *testing.T) {
	s := validSpec(t)
	s.Name = "-a"
	if err := s.Validate(); !errors.Is(err, ErrInvalidName) {
		t.Errorf("bad name: %v does not match ErrInvalidName", err)
	}
	s = validSpec(t)
	s.Model.Inputs = 0
	if err := s.Validate(); !errors.Is(err, model.ErrInvalidSpec) {
		t.Errorf("bad model: %v does not match model.ErrInvalidSpec", err)
	}
	s = validSpec(t)
	s.Checkpoint.Every = "x"
	if err := s.Validate(); !errors.Is(err, ErrInvalidInterval) {
		t.Errorf("bad interval: %v does not match ErrInvalidInterval", err)
	}
	s = validSpec(t)
	s.Resources.Trainer.Memory = "x"
	if err := s.Validate(); !errors.Is(err, ErrInvalidMemory) {
		t.Errorf("bad memory: %v does not match ErrInvalidMemory", err)
	}
	s = validSpec(t)
	s.Mode = "x"
	if err := s.Validate(); errors.Is(err, ErrInvalidName) {
		t.Errorf("bad mode: %v matches ErrInvalidName", err)
	}
}

func TestParsedSpecWithOmittedFieldsFailsOnlyOnRequiredOnes(t *testing.T) {
	s, err := Parse([]byte("name: j\n"))
	if err != nil {
		t.Fatal(err)
	}
	wantFieldError(t, s.Validate(), "model.kind")
	s.Model = ModelSpec{Kind: "linear", Inputs: 1, Outputs: 1}
	wantFieldError(t, s.Validate(), "data.train")
}
