package jobspec

import (
	"fmt"
	"math"
)

// Maxima of a job spec, all in one place (README "Confined paths and
// limits"). They keep a typo or a hostile spec from turning into thousands of
// processes, etcd records or gRPC messages larger than the Control API takes:
// `trainers: 100000` used to reach the agent and fail there as "cannot reach
// the agent". Each is far above what one cluster of this design runs.
const (
	MaxTrainers       = 1024 // processes of a job per role; one etcd record and one gRPC stream each
	MaxPservers       = 256  // the parameter shards; each trainer holds a connection to every pserver
	MaxPasses         = 1_000_000
	MaxBatchSize      = 1 << 20 // records per step and trainer
	MaxChunksPerTask  = 1 << 20
	MaxCheckpointKeep = 1000
	// MaxRoleGPUs bounds resources.<role>.gpu: one process's GPUs, all on
	// one node (a server holds 8 or 16).
	MaxRoleGPUs = 64
	// MaxHiddenLayers and MaxLayerWidth bound the model's shape; MaxParams
	// (1 Gi float32 parameters = 4 GiB) its size, whatever its memory request.
	MaxHiddenLayers = 64
	MaxLayerWidth   = 1 << 24
	MaxParams       = 1 << 30
	// MaxPathLength is PATH_MAX: data.train, data.test, checkpoint.dir.
	MaxPathLength = 4096
	// MaxFieldLength bounds the other strings (mode, kinds, every, memory).
	MaxFieldLength = 64
	// MaxPriority bounds priority both ways: enough levels for any policy,
	// few enough that a typo shows.
	MaxPriority = 1000
)

// validateLimits rejects counts and strings over the maxima above, before
// any other check builds something of their size.
func (s *Spec) validateLimits() *FieldError {
	for _, c := range []struct {
		field  string
		v, max int
	}{
		{"trainers", s.Trainers, MaxTrainers},
		{"pservers", s.Pservers, MaxPservers},
		{"passes", s.Passes, MaxPasses},
		{"batch_size", s.BatchSize, MaxBatchSize},
		{"model.inputs", s.Model.Inputs, MaxLayerWidth},
		{"model.outputs", s.Model.Outputs, MaxLayerWidth},
		{"data.chunks_per_task", s.Data.ChunksPerTask, MaxChunksPerTask},
		{"checkpoint.keep", s.Checkpoint.Keep, MaxCheckpointKeep},
	} {
		if c.v > c.max {
			return fieldError(c.field, fmt.Sprintf("%d is over the maximum of %d", c.v, c.max), nil)
		}
	}
	if s.Priority > MaxPriority || s.Priority < -MaxPriority {
		return fieldError("priority", fmt.Sprintf("%d is outside [-%d, %d]", s.Priority, MaxPriority, MaxPriority), nil)
	}
	if n := len(s.Model.Hidden); n > MaxHiddenLayers {
		return fieldError("model.hidden", fmt.Sprintf("%d layers are over the maximum of %d", n, MaxHiddenLayers), nil)
	}
	for i, h := range s.Model.Hidden {
		if h > MaxLayerWidth {
			return fieldError(fmt.Sprintf("model.hidden[%d]", i), fmt.Sprintf("%d is over the maximum of %d", h, MaxLayerWidth), nil)
		}
	}
	return s.validateStringLimits()
}

func (s *Spec) validateStringLimits() *FieldError {
	for _, f := range []struct {
		field, v string
		max      int
	}{
		{"mode", string(s.Mode), MaxFieldLength},
		{"model.kind", s.Model.Kind, MaxFieldLength},
		{"model.entry", s.Model.Entry, MaxPathLength},
		{"model.workspace", s.Model.Workspace, MaxPathLength},
		{"model.timeout", s.Model.Timeout, MaxFieldLength},
		{"optimizer.kind", s.Optimizer.Kind, MaxFieldLength},
		{"data.train", s.Data.Train, MaxPathLength},
		{"data.test", s.Data.Test, MaxPathLength},
		{"checkpoint.every", s.Checkpoint.Every, MaxFieldLength},
		{"checkpoint.dir", s.Checkpoint.Dir, MaxPathLength},
		{"resources.trainer.memory", s.Resources.Trainer.Memory, MaxFieldLength},
		{"resources.pserver.memory", s.Resources.Pserver.Memory, MaxFieldLength},
	} {
		if len(f.v) > f.max {
			return fieldError(f.field, fmt.Sprintf("%d bytes are over the maximum of %d", len(f.v), f.max), nil)
		}
	}
	return nil
}

// validateParams bounds the model's parameter count; call it after the model
// section is valid.
func (s *Spec) validateParams() *FieldError {
	need, err := s.MemoryNeed()
	if err != nil || need.Params <= MaxParams {
		return nil // an invalid model is validateModel's to report
	}
	p := "math.MaxInt64 or more"
	if need.Params < math.MaxInt64 {
		p = fmt.Sprint(need.Params)
	}
	return fieldError("model", fmt.Sprintf("%s parameters are over the maximum of %d", p, MaxParams), nil)
}
