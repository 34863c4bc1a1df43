package jobspec

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/gtrain/gtrain/model"
)

// ShardInfo is what CheckData needs of one record file, read by the server
// from the file's header and name.
type ShardInfo struct {
	Features int
	Classes  int // 0 when the labels are not classes (regression data)
	// Set and Of come from the file's name (PREFIX-PART-00001-of-00004):
	// the set it belongs to ("PREFIX-PART") and the set's shard count. Set
	// is empty for a file not named as a shard.
	Set string
	Of  int
	// Labels is the range of the file's labels; nil when the shard does not
	// record it (written before gtrain did, or empty).
	Labels *LabelRange
	// IDFields names the records' id fields (none in a dense shard), and
	// IDMax their largest ids (nil when the shard does not record them).
	IDFields []string
	IDMax    []uint64
}

// LabelRange is the smallest and largest label of a file, and its first
// label that is not a whole number, if any.
type LabelRange struct {
	Min, Max float64
	NotWhole *float64
}

// CheckData checks the spec against the data it names, which only the server
// can see. glob is filepath.Glob there; info reads a record file's header.
// data.train, and data.test when set, must match at least one file, of one
// shard set per prefix (two conversions into one prefix would train every
// record twice); every matched file's feature count must equal model.inputs;
// for a classifier (softmax, or mlp with more than one output) the records
// may not have more classes than model.outputs, nor labels that are not
// class indices in [0, model.outputs). Call it after Validate and
// ResolvePaths. Errors are *FieldError; a failure of glob or info is kept as
// the cause, so errors.Is sees through to it.
func (s *Spec) CheckData(glob func(pattern string) ([]string, error), info func(file string) (ShardInfo, error)) error {
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
		infos := make([]ShardInfo, len(files[i]))
		for j, file := range files[i] {
			si, err := info(file)
			if err != nil {
				return fieldError(set.field, fmt.Sprintf("cannot read the records in %s: %v", file, err), err)
			}
			if err := s.checkRecords(set.field, file, si); err != nil {
				return err
			}
			infos[j] = si
		}
		if err := oneSetEach(set.field, set.pattern, infos); err != nil {
			return err
		}
	}
	return nil
}

func (s *Spec) checkRecords(field, file string, si ShardInfo) *FieldError {
	if si.Features != s.Model.Inputs {
		return fieldError("model.inputs", fmt.Sprintf("%d expected by the records in %s, spec says %d", si.Features, file, s.Model.Inputs), nil)
	}
	if err := s.checkIDFields(field, file, si.IDFields); err != nil {
		return err
	}
	if err := s.checkVocab(file, si); err != nil {
		return err
	}
	if !s.isClassifier() {
		return nil
	}
	if si.Classes > s.Model.Outputs {
		return fieldError("model.outputs", fmt.Sprintf("the records in %s have %d classes, spec says %d", file, si.Classes, s.Model.Outputs), nil)
	}
	return s.checkLabels(field, file, si.Labels)
}

// checkLabels rejects labels a classifier cannot train on: they must be
// class indices, whole numbers in [0, model.outputs). Without it the job
// starts and its trainers crash on the first such record.
func (s *Spec) checkLabels(field, file string, r *LabelRange) *FieldError {
	if r == nil {
		return nil
	}
	classes := fmt.Sprintf("model %s classifies into model.outputs = %d classes, labels 0 to %d",
		s.Model.Kind, s.Model.Outputs, s.Model.Outputs-1)
	switch {
	case r.NotWhole != nil:
		return fieldError(field, fmt.Sprintf("label %v in %s is not a class index: %s; for regression labels use model kind linear (or mlp with outputs: 1)",
			*r.NotWhole, file, classes), nil)
	case r.Min < 0:
		return fieldError(field, fmt.Sprintf("label %v in %s is not a class index: %s", r.Min, file, classes), nil)
	case r.Max >= float64(s.Model.Outputs):
		return fieldError("model.outputs", fmt.Sprintf("label %v in %s is past the model's classes: %s; raise model.outputs to at least %v",
			r.Max, file, classes, r.Max+1), nil)
	}
	return nil
}

// oneSetEach rejects a pattern that matches shards of one prefix converted
// with two shard counts (housing-train-*-of-00004 and -of-00002): the job
// would train on every record once per set.
func oneSetEach(field, pattern string, infos []ShardInfo) *FieldError {
	counts := map[string]map[int]int{} // set -> shard count -> files
	for _, si := range infos {
		if si.Set == "" {
			continue
		}
		if counts[si.Set] == nil {
			counts[si.Set] = map[int]int{}
		}
		counts[si.Set][si.Of]++
	}
	for _, set := range slices.Sorted(maps.Keys(counts)) {
		if len(counts[set]) < 2 {
			continue
		}
		var found []string
		for _, of := range slices.Sorted(maps.Keys(counts[set])) {
			found = append(found, fmt.Sprintf("%s-*-of-%05d (%d files)", set, of, counts[set][of]))
		}
		return fieldError(field, fmt.Sprintf("the pattern %q matches %d shard sets of one prefix: %s; the job would train on every record once per set: "+
			"remove the stale set (`gctl data convert --replace` rewrites a prefix) or narrow the pattern",
			pattern, len(found), strings.Join(found, " and ")), nil)
	}
	return nil
}

func (s *Spec) isClassifier() bool {
	return s.Model.Kind == model.KindSoftmax || ((s.Model.Kind == model.KindMLP || s.Model.IsProgram() || s.Model.IsRecommender()) && s.Model.Outputs > 1)
}
