package jobspec

import (
	"fmt"

	"github.com/gtrain/gtrain/model"
)

// CheckData checks the spec against the data it names, which only the server
// can see. glob is filepath.Glob there; features reads a record file's
// feature count and, for classification data, its number of classes (0 when
// the labels are not classes). data.train, and data.test when set, must match
// at least one file; every matched file's feature count must equal
// model.inputs; for a classifier (softmax, or mlp with more than one output)
// the records may not have more classes than model.outputs. Call it after
// Validate and ResolvePaths. Errors are *FieldError; a failure of glob or
// features is kept as the cause, so errors.Is sees through to it.
func (s *Spec) CheckData(glob func(pattern string) ([]string, error), features func(file string) (features, classes int, err error)) error {
	sets := []struct{ field, pattern string }{{"data.train", s.Data.Train}, {"data.test", s.Data.Test}}
	files := make([][]string, len(sets))
	for i, set := range sets {
		if set.pattern == "" && set.field == "data.test" {
			continue
		}
		matches, err := glob(set.pattern)
		if err != nil {
			return fieldError(set.field, fmt.Sprintf("cannot expand pattern %q: %v", set.pattern, err), err)
		}
		if len(matches) == 0 {
			return fieldError(set.field, fmt.Sprintf("the pattern %q matched no file", set.pattern), nil)
		}
		files[i] = matches
	}
	for i, set := range sets {
		for _, file := range files[i] {
			if err := s.checkRecords(set.field, file, features); err != nil {
				return err
			}
		}
	}
	return nil
}

func (s *Spec) checkRecords(field, file string, features func(string) (int, int, error)) *FieldError {
	n, classes, err := features(file)
	if err != nil {
		return fieldError(field, fmt.Sprintf("cannot read the records in %s: %v", file, err), err)
	}
	if n != s.Model.Inputs {
		return fieldError("model.inputs", fmt.Sprintf("%d expected by the records in %s, spec says %d", n, file, s.Model.Inputs), nil)
	}
	if s.isClassifier() && classes > s.Model.Outputs {
		return fieldError("model.outputs", fmt.Sprintf("the records in %s have %d classes, spec says %d", file, classes, s.Model.Outputs), nil)
	}
	return nil
}

func (s *Spec) isClassifier() bool {
	return s.Model.Kind == model.KindSoftmax || ((s.Model.Kind == model.KindMLP || s.Model.IsProgram()) && s.Model.Outputs > 1)
}
