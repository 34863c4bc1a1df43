package jobspec

import (
	"testing"
)

// base is a spec that parses and validates; each case appends one field.
const writtenBase = "name: j\nmodel: {kind: linear, inputs: 3}\n"

func TestParseRejectsWrittenZeroNegativeAndFractionalCounts(t *testing.T) {
	tests := []struct {
		name, yaml, field, fragment string
	}{
		{"trainers 0", "trainers: 0\n", "trainers", "at least 1, got 0"},
		{"trainers count 0", "trainers: {count: 0, min: 1, max: 2}\n", "trainers", "at least 1, got 0"},
		{"pservers -1", "pservers: -1\n", "pservers", "at least 1, got -1"},
		{"passes 0", "passes: 0\n", "passes", "at least 1, got 0"},
		{"passes 3.5", "passes: 3.5\n", "passes", "whole number, got 3.5"},
		{"batch_size 0", "batch_size: 0\n", "batch_size", "at least 1"},
		{"batch_size 0.5", "batch_size: 0.5\n", "batch_size", "whole number"},
		{"global_batch 0", "global_batch: 0\n", "global_batch", "at least 1"},
		{"chunks_per_task 0", "data: {train: x, chunks_per_task: 0}\n", "data.chunks_per_task", "at least 1"},
		{"checkpoint.keep 0", "checkpoint: {keep: 0}\n", "checkpoint.keep", "at least 1"},
		{"learning_rate 0", "optimizer: {learning_rate: 0}\n", "optimizer.learning_rate", "> 0, got 0"},
		{"learning_rate -1", "optimizer: {learning_rate: -1}\n", "optimizer.learning_rate", "> 0"},
		{"epsilon 0", "optimizer: {kind: adam, epsilon: 0.0}\n", "optimizer.epsilon", "> 0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(writtenBase + tt.yaml))
			wantFieldError(t, err, tt.field, tt.fragment)
		})
	}
}

func TestParseKeepsWrittenWholeCountsAndDefaultsOmittedOnes(t *testing.T) {
	s, err := Parse([]byte(writtenBase + "passes: 1e2\nbatch_size: 8.0\ntrainers: 3\n"))
	if err != nil {
		t.Fatal(err)
	}
	if s.Passes != 100 || s.BatchSize != 8 || s.Trainers != 3 {
		t.Errorf("passes, batch_size, trainers = %d, %d, %d; want 100, 8, 3", s.Passes, s.BatchSize, s.Trainers)
	}
	if s.Pservers != DefaultPservers || s.Optimizer.LearningRate != DefaultLearningRate {
		t.Errorf("omitted pservers, learning_rate = %d, %v; want the defaults %d, %v",
			s.Pservers, s.Optimizer.LearningRate, DefaultPservers, DefaultLearningRate)
	}
}

func TestMomentumZeroStaysZeroAndOmittedIsTheDefault(t *testing.T) {
	zero, err := Parse([]byte(writtenBase + "data: {train: x}\noptimizer: {kind: momentum, momentum: 0}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got := zero.Optimizer.MomentumValue(); got != 0 {
		t.Errorf("momentum: 0 parsed as %v, want 0", got)
	}
	zero.ApplyDefaults() // as the agent does again on the submitted JSON
	if got := zero.Optimizer.MomentumValue(); got != 0 {
		t.Errorf("momentum: 0 became %v after ApplyDefaults, want 0", got)
	}
	if err := zero.Validate(); err != nil {
		t.Errorf("momentum 0 does not validate: %v", err)
	}
	omitted, err := Parse([]byte(writtenBase + "optimizer: {kind: momentum}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got := omitted.Optimizer.MomentumValue(); got != DefaultMomentum {
		t.Errorf("omitted momentum is %v, want the default %v", got, DefaultMomentum)
	}
}
