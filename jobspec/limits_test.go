package jobspec

import (
	"fmt"
	"strings"
	"testing"
)

// Each maximum is enforced at Validate with the field and the maximum named;
// the maximum itself is accepted.
func TestValidateRejectsOverLimits(t *testing.T) {
	tests := []struct {
		name    string
		breakIt func(s *Spec)
		field   string
		max     int
	}{
		{"trainers", func(s *Spec) { s.Trainers = 100000 }, "trainers", MaxTrainers},
		{"pservers", func(s *Spec) { s.Pservers = MaxPservers + 1 }, "pservers", MaxPservers},
		{"passes", func(s *Spec) { s.Passes = MaxPasses + 1 }, "passes", MaxPasses},
		{"batch_size", func(s *Spec) { s.BatchSize = MaxBatchSize + 1 }, "batch_size", MaxBatchSize},
		{"inputs", func(s *Spec) { s.Model.Inputs = MaxLayerWidth + 1 }, "model.inputs", MaxLayerWidth},
		{"chunks", func(s *Spec) { s.Data.ChunksPerTask = MaxChunksPerTask + 1 }, "data.chunks_per_task", MaxChunksPerTask},
		{"keep", func(s *Spec) { s.Checkpoint.Keep = MaxCheckpointKeep + 1 }, "checkpoint.keep", MaxCheckpointKeep},
		{"hidden layers", func(s *Spec) {
			s.Model = ModelSpec{Kind: "mlp", Inputs: 13, Outputs: 1, Hidden: make([]int, MaxHiddenLayers+1)}
		}, "model.hidden", MaxHiddenLayers},
		{"hidden width", func(s *Spec) {
			s.Model = ModelSpec{Kind: "mlp", Inputs: 13, Outputs: 1, Hidden: []int{4, MaxLayerWidth + 1}}
		}, "model.hidden[1]", MaxLayerWidth},
		{"train path", func(s *Spec) { s.Data.Train = "/" + strings.Repeat("a", MaxPathLength) }, "data.train", MaxPathLength},
		{"checkpoint dir", func(s *Spec) { s.Checkpoint.Dir = "/" + strings.Repeat("a", MaxPathLength) }, "checkpoint.dir", MaxPathLength},
		{"every", func(s *Spec) { s.Checkpoint.Every = strings.Repeat("9", MaxFieldLength+1) }, "checkpoint.every", MaxFieldLength},
		{"parameters", func(s *Spec) {
			s.Model = ModelSpec{Kind: "mlp", Inputs: 13, Outputs: 1, Hidden: []int{1 << 16, 1 << 16}}
		}, "model", MaxParams},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := validSpec(t)
			tt.breakIt(s)
			wantFieldError(t, s.Validate(), tt.field, fmt.Sprintf("over the maximum of %d", tt.max))
		})
	}
	s := validSpec(t)
	s.Trainers, s.Pservers, s.Passes, s.BatchSize = MaxTrainers, MaxPservers, MaxPasses, MaxBatchSize
	if err := s.Validate(); err != nil {
		t.Errorf("a spec at the maxima: %v", err)
	}
}
