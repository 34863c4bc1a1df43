package jobspec

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestExampleFitALineParsesAndValidates(t *testing.T) {
	s, err := ParseFile(filepath.Join("..", "examples", "fit_a_line.yaml"))
	if err != nil {
		t.Fatalf("ParseFile: %v", err)
	}
	if err := s.Validate(); err != nil {
		t.Fatalf("Validate: %v", err)
	}
	examples, err := filepath.Abs(filepath.Join("..", "examples"))
	if err != nil {
		t.Fatal(err)
	}
	want := Spec{
		Name: "fit-a-line", Mode: ModeSync, Trainers: 2, Pservers: 2, Passes: 30, BatchSize: 20, Seed: 1,
		Model:      ModelSpec{Kind: "linear", Inputs: 13, Outputs: 1},
		Optimizer:  OptimizerSpec{Kind: OptimizerSGD, LearningRate: 0.01, Momentum: new(0.9), Beta1: 0.9, Beta2: 0.999, Epsilon: 1e-8},
		Data:       DataSpec{Train: filepath.Join(examples, "data", "housing-train-*"), Test: filepath.Join(examples, "data", "housing-test-*"), ChunksPerTask: 1},
		Checkpoint: CheckpointSpec{Every: "10s", Keep: 3},
		Resources:  ResourcesSpec{Trainer: Resource{CPU: 0.25, Memory: "64Mi"}, Pserver: Resource{CPU: 0.25, Memory: "64Mi"}},
		Restarts:   RestartsSpec{Limit: 5, Window: "60s", HungAfter: "60s"},
	}
	if !reflect.DeepEqual(*s, want) {
		t.Errorf("parsed example:\n got %+v\nwant %+v", *s, want)
	}
}

func TestParseAppliesDefaults(t *testing.T) {
	s, err := Parse([]byte("name: j\nmodel: {kind: linear, inputs: 3}\ndata: {train: x}\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := Spec{
		Name: "j", Mode: "sync", Trainers: 1, Pservers: 1, Passes: 1, BatchSize: 20, Seed: 1,
		Model:      ModelSpec{Kind: "linear", Inputs: 3, Outputs: 1},
		Optimizer:  OptimizerSpec{Kind: "sgd", LearningRate: 0.01, Momentum: new(0.9), Beta1: 0.9, Beta2: 0.999, Epsilon: 1e-8},
		Data:       DataSpec{Train: "x", ChunksPerTask: 1},
		Checkpoint: CheckpointSpec{Every: "10s", Keep: 3},
		Restarts:   RestartsSpec{Limit: 5, Window: "60s", HungAfter: "60s"},
	}
	if !reflect.DeepEqual(*s, want) {
		t.Errorf("defaults:\n got %+v\nwant %+v", *s, want)
	}
	again := *s
	again.ApplyDefaults()
	if !reflect.DeepEqual(again, *s) {
		t.Errorf("ApplyDefaults is not idempotent: %+v became %+v", *s, again)
	}
}

func TestApplyDefaultsKeepsSetValues(t *testing.T) {
	s := Spec{Trainers: -1, Passes: 7, Seed: 42, Model: ModelSpec{Kind: "softmax"},
		Optimizer: OptimizerSpec{LearningRate: -0.5}, Checkpoint: CheckpointSpec{Every: "200"}}
	s.ApplyDefaults()
	if s.Trainers != -1 || s.Passes != 7 || s.Seed != 42 || s.Optimizer.LearningRate != -0.5 || s.Checkpoint.Every != "200" {
		t.Errorf("ApplyDefaults overwrote set values: %+v", s)
	}
	if s.Model.Outputs != 0 {
		t.Errorf("softmax outputs defaulted to %d; only linear has a default", s.Model.Outputs)
	}
}

func TestParseRejectsUnknownFields(t *testing.T) {
	tests := []struct {
		name, yaml, field string
		fragments         []string
	}{
		{"top level", "name: j\nbatchSize: 3\n", "batchSize", []string{"line 2", "unknown field", "did you mean batch_size?"}},
		{"nested", "name: j\nmodel:\n  kind: mlp\n  hiden: [3]\n", "model.hiden", []string{"line 4", "model takes kind, inputs, outputs, hidden"}},
		{"deep", "resources:\n  trainer: {cpu: 1, gpus: 2}\n", "resources.trainer.gpus", []string{"line 2", "takes cpu, memory, gpu"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(tt.yaml))
			wantFieldError(t, err, tt.field, tt.fragments...)
		})
	}
}

func TestParseNamesTheFieldOfATypeError(t *testing.T) {
	tests := []struct{ yaml, want string }{
		{"name: j\ntrainers: two\n", "trainers (line 2)"},
		{"model:\n  hidden: [4, x]\n", "model.hidden[1] (line 2)"},
		{"seed: -1\n", "seed (line 1)"},
		{"resources:\n  pserver: {cpu: lots, memory: 1Gi}\n", "resources.pserver.cpu (line 2)"},
		{"resources:\n  pserver: {cpu: x, memory: x}\n", "one of resources.pserver.cpu, resources.pserver.memory (line 2)"},
	}
	for _, tt := range tests {
		_, err := Parse([]byte(tt.yaml))
		if !errors.Is(err, ErrInvalidSpec) {
			t.Errorf("Parse(%q) = %v, want ErrInvalidSpec", tt.yaml, err)
			continue
		}
		if !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Parse(%q) = %q, want it to name %q", tt.yaml, err, tt.want)
		}
	}
}

func TestParseRejectsMalformedDocuments(t *testing.T) {
	tests := []struct{ name, yaml, want string }{
		{"empty", "", "empty"},
		{"comments only", "# nothing\n", "empty"},
		{"syntax", "name: [j\n", "line"},
		{"duplicate key", "name: a\nname: b\n", "already defined"},
		{"two documents", "name: a\n---\nname: b\n", "second YAML document"},
		{"not a mapping", "- a\n- b\n", "cannot unmarshal"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(tt.yaml))
			if !errors.Is(err, ErrInvalidSpec) {
				t.Fatalf("Parse = %v, want ErrInvalidSpec", err)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Parse = %q, want it to mention %q", err, tt.want)
			}
		})
	}
}

func TestParseAcceptsMergeKeys(t *testing.T) {
	s, err := Parse([]byte(`
name: j
resources:
  trainer: &res {cpu: 2, memory: 1Gi}
  pserver:
    <<: *res
    cpu: 3
`))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	if s.Resources.Pserver != (Resource{CPU: 3, Memory: "1Gi"}) {
		t.Errorf("pserver resources = %+v, want cpu 3 memory 1Gi", s.Resources.Pserver)
	}
}

func TestParseFileResolvesPathsAgainstItsDirectory(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "job.yaml")
	body := "name: j\nmodel: {kind: linear, inputs: 2}\ndata: {train: d/train-*, test: /abs/test-*}\ncheckpoint: {dir: ckpt}\n"
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := ParseFile(path)
	if err != nil {
		t.Fatalf("ParseFile: %v", err)
	}
	if want := filepath.Join(dir, "d", "train-*"); s.Data.Train != want {
		t.Errorf("data.train = %q, want %q", s.Data.Train, want)
	}
	if s.Data.Test != "/abs/test-*" {
		t.Errorf("data.test = %q, want the absolute path unchanged", s.Data.Test)
	}
	if want := filepath.Join(dir, "ckpt"); s.Checkpoint.Dir != want {
		t.Errorf("checkpoint.dir = %q, want %q", s.Checkpoint.Dir, want)
	}
}

func TestParseFileNamesTheFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bad.yaml")
	if err := os.WriteFile(path, []byte("nmae: j\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := ParseFile(path)
	if !errors.Is(err, ErrInvalidSpec) || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "nmae") {
		t.Errorf("ParseFile = %v, want ErrInvalidSpec naming %s and nmae", err, path)
	}
	_, err = ParseFile(filepath.Join(t.TempDir(), "missing.yaml"))
	if !errors.Is(err, os.ErrNotExist) {
		t.Errorf("ParseFile(missing) = %v, want os.ErrNotExist", err)
	}
}

func TestResolvePathsLeavesEmptyPathsEmpty(t *testing.T) {
	s := Spec{Data: DataSpec{Train: "t"}}
	s.ResolvePaths("/jobs")
	if s.Data.Train != "/jobs/t" || s.Data.Test != "" || s.Checkpoint.Dir != "" {
		t.Errorf("ResolvePaths: %+v", s.Data)
	}
}

func TestSpecJSONRoundTripUsesSnakeCase(t *testing.T) {
	s := validSpec(t)
	s.Model = ModelSpec{Kind: "mlp", Inputs: 4, Outputs: 3, Hidden: []int{8, 8}}
	data, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{`"batch_size":`, `"learning_rate":`, `"chunks_per_task":`, `"hidden":[8,8]`, `"memory":`} {
		if !strings.Contains(string(data), key) {
			t.Errorf("JSON %s lacks %s", data, key)
		}
	}
	var back Spec
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, *s) {
		t.Errorf("round trip:\n got %+v\nwant %+v", back, *s)
	}
}
