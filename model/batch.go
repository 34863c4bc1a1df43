package model

import (
	"fmt"
	"math"
)

// Batch is N records of Inputs features each, in float32 as the record
// shards store them (the models compute in float32: no widening per step).
// X is row-major (N*Inputs values); Y holds one label per record: the
// target value for regression models, the class index (as an exact
// integer) for classifiers.
type Batch struct {
	N, Inputs int
	X         []float32
	Y         []float32
}

// CheckBatch reports whether b can be fed to a model built from s. Gradient
// and Evaluate panic on a batch that fails this check, because their
// signatures have no error; callers holding data from outside (record shards)
// should check first. Every error wraps ErrInvalidBatch.
func (s Spec) CheckBatch(b Batch) error {
	if b.N < 0 {
		return fmt.Errorf("batch: N must be >= 0, got %d: %w", b.N, ErrInvalidBatch)
	}
	if b.Inputs != s.Inputs {
		return fmt.Errorf("batch: inputs = %d, model.inputs = %d: %w", b.Inputs, s.Inputs, ErrInvalidBatch)
	}
	if len(b.X) != b.N*b.Inputs {
		return fmt.Errorf("batch: len(X) = %d, want N*Inputs = %d: %w", len(b.X), b.N*b.Inputs, ErrInvalidBatch)
	}
	if len(b.Y) != b.N {
		return fmt.Errorf("batch: len(Y) = %d, want N = %d: %w", len(b.Y), b.N, ErrInvalidBatch)
	}
	if !s.isClassifier() {
		return nil
	}
	for r, y := range b.Y {
		if _, err := classIndex(y, s.Outputs); err != nil {
			return fmt.Errorf("batch: record %d: %w", r, err)
		}
	}
	return nil
}

// isClassifier reports whether labels are class indices scored by cross entropy.
func (s Spec) isClassifier() bool {
	return s.Kind == KindSoftmax || (s.Kind == KindMLP && s.Outputs > 1)
}

func classIndex(y float32, classes int) (int, error) {
	if float64(y) != math.Trunc(float64(y)) || y < 0 || float64(y) >= float64(classes) {
		return 0, fmt.Errorf("label %v is not a class index in [0, %d): %w", y, classes, ErrInvalidBatch)
	}
	return int(y), nil
}
