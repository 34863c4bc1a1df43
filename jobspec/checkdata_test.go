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
	infos    map[string]ShardInfo // overrides features: names and label ranges
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

func (f *fakeData) featureCount(file string) (ShardInfo, error) {
	f.read = append(f.read, file)
	if f.readErr != nil {
		return ShardInfo{}, f.readErr
	}
	if si, ok := f.infos[file]; ok {
		return si, nil
	}
	c := f.features[file]
	return ShardInfo{Features: c[0], Classes: c[1]}, nil
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

func TestCheckDataRejectsAPatternMixingShardSets(t *testing.T) {
	s, data := validSpec(t), housing()
	files := []string{"/data/housing-train-00000-of-00002", "/data/housing-train-00001-of-00002",
		"/data/housing-train-00000-of-00004", "/data/housing-train-00001-of-00004"}
	data.matches["/data/housing-train-*"] = files
	data.infos = map[string]ShardInfo{}
	for _, f := range files {
		of := 2
		if strings.HasSuffix(f, "4") {
			of = 4
		}
		data.infos[f] = ShardInfo{Features: 13, Set: "/data/housing-train", Of: of}
	}
	wantFieldError(t, s.CheckData(data.glob, data.featureCount), "data.train",
		"/data/housing-train-*-of-00002 (2 files) and /data/housing-train-*-of-00004 (2 files)", "--replace")

	// The train and test sets of one prefix are two sets, not a mix.
	s.Data.Train = "/data/housing-*"
	data.matches["/data/housing-*"] = []string{"/data/housing-train-00000-of-00002", "/data/housing-test-00000-of-00001"}
	data.infos["/data/housing-test-00000-of-00001"] = ShardInfo{Features: 13, Set: "/data/housing-test", Of: 1}
	if err := s.CheckData(data.glob, data.featureCount); err != nil {
		t.Errorf("a pattern over one train and one test set: %v", err)
	}
}

func TestCheckDataRejectsLabelsThatAreNotClassesOfTheModel(t *testing.T) {
	tests := []struct {
		name      string
		labels    *LabelRange
		field     string
		fragments []string
	}{
		{"regression labels", &LabelRange{Min: 5, Max: 50, NotWhole: new(23.1)}, "data.train", []string{"label 23.1", "10 classes", "linear"}},
		{"negative label", &LabelRange{Min: -1, Max: 9}, "data.train", []string{"label -1", "labels 0 to 9"}},
		{"label past the classes", &LabelRange{Min: 0, Max: 200}, "model.outputs", []string{"label 200", "10 classes", "at least 201"}},
		{"class indices", &LabelRange{Min: 0, Max: 9}, "", nil},
		{"not recorded", nil, "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := validSpec(t)
			s.Model = ModelSpec{Kind: "softmax", Inputs: 784, Outputs: 10}
			s.Data = DataSpec{Train: "/d/train-*", ChunksPerTask: 1}
			data := &fakeData{matches: map[string][]string{"/d/train-*": {"/d/train-0"}},
				infos: map[string]ShardInfo{"/d/train-0": {Features: 784, Labels: tt.labels}}}
			err := s.CheckData(data.glob, data.featureCount)
			if tt.field == "" {
				if err != nil {
					t.Errorf("CheckData: %v", err)
				}
				return
			}
			wantFieldError(t, err, tt.field, append(tt.fragments, "/d/train-0")...)
		})
	}
}
