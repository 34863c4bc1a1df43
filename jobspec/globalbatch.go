package jobspec

import "fmt"

// MaxMicroBatches bounds global_batch / batch_size: the pushes one sync step
// gathers on every pserver.
const MaxMicroBatches = MaxTrainers

// StepRecords is the records of one sync step: global_batch, or, for a spec
// stored before global_batch existed (0), trainers × batch_size.
func (s *Spec) StepRecords() int {
	if s.GlobalBatch > 0 {
		return s.GlobalBatch
	}
	return s.Trainers * s.BatchSize
}

// MicroBatches is the number of micro-batches of batch_size records a sync
// step is cut into, whoever computes them.
func (s *Spec) MicroBatches() int {
	if s.BatchSize < 1 {
		return 0
	}
	return s.StepRecords() / s.BatchSize
}

// FixGlobalBatch sets an omitted global_batch to trainers × batch_size of
// the spec as submitted (flag overrides included). It is fixed for the job's
// life from then on: scaling the trainers changes who computes a step, never
// what a step is. Not part of ApplyDefaults, which runs on the spec file
// before `gctl job start --trainers` overrides the count.
func (s *Spec) FixGlobalBatch() {
	if s.GlobalBatch == 0 {
		s.GlobalBatch = s.Trainers * s.BatchSize
	}
}

// validateGlobalBatch accepts an omitted global_batch (0) or a positive
// multiple of batch_size: a step is cut into whole micro-batches, so every
// micro-batch is the same unit whichever trainer computes it.
func (s *Spec) validateGlobalBatch() *FieldError {
	g := s.GlobalBatch
	switch {
	case g == 0:
		return nil
	case g < 0:
		return fieldError("global_batch", fmt.Sprintf("must be at least 1, got %d", g), nil)
	case s.BatchSize < 1:
		return nil // batch_size is reported first
	case g%s.BatchSize != 0:
		return fieldError("global_batch", fmt.Sprintf("must be a multiple of batch_size (%d), got %d: a step is cut into whole micro-batches of batch_size records", s.BatchSize, g), nil)
	case g/s.BatchSize > MaxMicroBatches:
		return fieldError("global_batch", fmt.Sprintf("%d is %d micro-batches of batch_size %d, over the maximum of %d", g, g/s.BatchSize, s.BatchSize, MaxMicroBatches), nil)
	}
	return nil
}
