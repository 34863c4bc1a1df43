package jobspec

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
)

// fakeData stands in for the server's file system: files per pattern, and
// the feature and class counts of each file.
type fakeData struct {
	matches  map[string][]string
	features map[string][2]int
	globErr  error
	readErr  error
	read     []string
}

func (f *fakeData) glob(pattern string) ([]string, error) {
	if f.globErr != nil {
		return nil, f.globErr
	}
	return f.matches[pattern], nil
}

func (f *fakeData) featureCount(file string) (int, int, error) {
	f.read = append(f.read, file)
	if f.readErr != nil {
		return 0, 0, f.readErr
	}
	c := f.features[file]
	return c[0], c[1], nil
}

func housing() *fakeData {
	return &fakeData{
		matches: map[string][]string{
			"/data/housing-train-*": {"/data/housing-train-00000-of-00002", "/data/housing-train-00001-of-00002"},
			"/data/housing-test-*":  {"/data/housing-test-00000-of-00001"},
		},
		features: map[string][2]int{
			"/data/housing-train-00000-of-00002": {13, 0},
			"/data/housing-train-00001-of-00002": {13, 0},
			"/data/housing-test-00000-of-00001":  {13, 0},
		},
	}
}

func TestCheckDataAcceptsMatchingData(t *testing.T) {
	s, data := validSpec(t), housing()
	if err := s.CheckData(data.glob, data.featureCount); err != nil {
		t.Fatalf("CheckData: %v", err)
	}
	if len(data.read) != 3 {
		t.Errorf("CheckData read %v, want every matched file", data.read)
	}
}

func TestCheckDataRejectsAPatternMatchingNothing(t *testing.T) {
	s, data := validSpec(t), housing()
	s.Data.Train = "/data/housin-train-*"
	wantFieldError(t, s.CheckData(data.glob, data.featureCount), "data.train", `"/data/housin-train-*"`, "matched no file")

	s = validSpec(t)
	s.Data.Test = "/data/nothing-*"
	wantFieldError(t, s.CheckData(data.glob, data.featureCount), "data.test", "matched no file")

	s = validSpec(t)
	s.Data.Test = ""
	if err := s.CheckData(data.glob, data.featureCount); err != nil {
		t.Errorf("CheckData without a test set: %v", err)
	}
}

func TestCheckDataRejectsAFeatureMismatch(t *testing.T) {
	s, data := validSpec(t), housing()
	s.Model.Inputs = 12
	wantFieldError(t, s.CheckData(data.glob, data.featureCount), "model.inputs",
		"13 expected by the records in /data/housing-train-00000-of-00002, spec says 12")

	s = validSpec(t)
	data.features["/data/housing-test-00000-of-00001"] = [2]int{14, 0}
	wantFieldError(t, s.CheckData(data.glob, data.featureCount), "model.inputs",
		"14 expected by the records in /data/housing-test-00000-of-00001, spec says 13")
}

func TestCheckDataRejectsMoreClassesThanOutputs(t *testing.T) {
	mnist := func() *fakeData {
		return &fakeData{
			matches:  map[string][]string{"/mnist/train-*": {"/mnist/train-0"}},
			features: map[string][2]int{"/mnist/train-0": {784, 10}},
		}
	}
	tests := []struct {
		name  string
		model ModelSpec
		field string
	}{
		{"softmax too few outputs", ModelSpec{Kind: "softmax", Inputs: 784, Outputs: 9}, "model.outputs"},
		{"mlp classifier too few outputs", ModelSpec{Kind: "mlp", Inputs: 784, Outputs: 5, Hidden: []int{32}}, "model.outputs"},
		{"softmax enough outputs", ModelSpec{Kind: "softmax", Inputs: 784, Outputs: 10}, ""},
		{"softmax spare outputs", ModelSpec{Kind: "softmax", Inputs: 784, Outputs: 12}, ""},
		{"mlp regression", ModelSpec{Kind: "mlp", Inputs: 784, Outputs: 1, Hidden: []int{32}}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, data := validSpec(t), mnist()
			s.Model = tt.model
			s.Data = DataSpec{Train: "/mnist/train-*", ChunksPerTask: 1}
			err := s.CheckData(data.glob, data.featureCount)
			if tt.field == "" {
				if err != nil {
					t.Errorf("CheckData: %v", err)
				}
				return
			}
			wantFieldError(t, err, tt.field, "10 classes", "/mnist/train-0")
		})
	}
}

func TestCheckDataKeepsTheCauseOfAFailedLookup(t *testing.T) {
	s, data := validSpec(t), housing()
	data.globErr = filepath.ErrBadPattern
	err := s.CheckData(data.glob, data.featureCount)
	wantFieldError(t, err, "data.train")
	if !errors.Is(err, filepath.ErrBadPattern) {
		t.Errorf("%v does not match filepath.ErrBadPattern", err)
	}

	data = housing()
	damaged := errors.New("chunk 3 at offset 4096: checksum mismatch")
	data.readErr = damaged
	err = s.CheckData(data.glob, data.featureCount)
	wantFieldError(t, err, "data.train", "/data/housing-train-00000-of-00002", "checksum mismatch")
	if !errors.Is(err, damaged) {
		t.Errorf("%v does not match the reader's error", err)
	}
	if strings.Count(strings.Join(data.read, ","), "housing") != 1 {
		t.Errorf("CheckData read on after a failure: %v", data.read)
	}
}
