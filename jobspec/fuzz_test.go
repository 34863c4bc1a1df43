package jobspec

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// FuzzParse feeds arbitrary documents to the job spec parser and validator
// (what gctl runs on a user's file and the agent on a submitted spec): no
// panic, every rejection wraps ErrInvalidSpec (a FieldError names the field),
// and whatever validates is within the maxima of limits.go.
func FuzzParse(f *testing.F) {
	for _, p := range []string{"../examples/fit_a_line.yaml"} {
		if b, err := os.ReadFile(filepath.FromSlash(p)); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte("name: fit-a-line\nmodel: {kind: linear, inputs: 13}\ndata: {train: /data/housing-train-*, test: /data/housing-test-*}\n"))
	f.Add([]byte("name: m\nmode: async\ntrainers: 3\npservers: 2\nmodel: {kind: mlp, inputs: 4, outputs: 3, hidden: [8, 8]}\n" +
		"optimizer: {kind: adam, learning_rate: 0.001}\ndata: {train: d/*, chunks_per_task: 2}\n" +
		"checkpoint: {every: \"200\", keep: 2, dir: ckpt}\nresources: {trainer: {cpu: 1, memory: 512Mi}, pserver: {memory: 1Gi}}\n"))
	f.Add([]byte("trainers: 100000\n"))
	f.Add([]byte("a: &a [*a, *a]\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := Parse(data)
		if err != nil {
			if !errors.Is(err, ErrInvalidSpec) {
				t.Fatalf("Parse error does not wrap ErrInvalidSpec: %v", err)
			}
			return
		}
		if err := s.Validate(); err != nil {
			var fe *FieldError
			if !errors.As(err, &fe) || fe.Field == "" {
				t.Fatalf("Validate error is not a FieldError naming a field: %v", err)
			}
			return
		}
		if s.Trainers > MaxTrainers || s.Pservers > MaxPservers || len(s.Model.Hidden) > MaxHiddenLayers {
			t.Fatalf("a spec over the maxima validated: %+v", s)
		}
		s.ResolvePaths("/spec/dir")
		_ = s.Workers()
	})
}
