package jobspec

import (
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gtrain/gtrain/model"
)

func TestExampleProgramParses(t *testing.T) {
	s, err := ParseFile(filepath.Join("..", "examples", "fashion_mnist_program.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	ws, _ := filepath.Abs(filepath.Join("..", "examples", "program"))
	if !s.Model.IsProgram() || s.Model.Workspace != ws || s.Model.EntryArgv()[1] != "mlp.py" {
		t.Fatalf("model: %+v", s.Model)
	}
	if need, err := s.MemoryNeed(); err != nil || need.Params != 0 {
		t.Fatalf("before the declaration: %+v %v", need, err)
	}
	s.Model.Declared = &Declared{Params: []DeclaredParam{{Name: "w0", Shape: []int{784, 128}}, {Name: "b0", Shape: []int{128}}}}
	if need, err := s.MemoryNeed(); err != nil || need.Params != 784*128+128 {
		t.Fatalf("after the declaration: %+v %v", need, err)
	}
}

func TestProgramFieldRules(t *testing.T) {
	base := "name: p\ndata: {train: x}\nmodel: {kind: program, entry: ./m, workspace: /w, inputs: 3, outputs: 2%s}\n"
	for _, tc := range []struct{ extra, field string }{
		{", timeout: 5m", ""},
		{", timeout: soon", "model.timeout"},
		{", timeout: 2h", "model.timeout"},
		{", hidden: [0]", "model.hidden[0]"},
		{", outputs: 0", "model.outputs"},
	} {
		body := strings.Replace(base, "%s", tc.extra, 1)
		if tc.extra == ", outputs: 0" {
			body = strings.Replace(base, ", outputs: 2%s", tc.extra, 1)
		}
		s, err := Parse([]byte(body))
		if err == nil {
			err = s.Validate()
		}
		checkField(t, tc.extra, err, tc.field)
	}
	for _, body := range []string{
		"name: p\ndata: {train: x}\nmodel: {kind: program, workspace: /w, inputs: 3, outputs: 2}\n",
		"name: p\ndata: {train: x}\nmodel: {kind: program, entry: '  ', workspace: /w, inputs: 3, outputs: 2}\n",
	} {
		s, _ := Parse([]byte(body))
		checkField(t, body, s.Validate(), "model.entry")
	}
	s, _ := Parse([]byte("name: p\ndata: {train: x}\nmodel: {kind: softmax, inputs: 3, outputs: 2, entry: ./m}\n"))
	checkField(t, "entry on softmax", s.Validate(), "model.entry")
	// The declaration is the agent's to record, never the user's.
	_, err := Parse([]byte("name: p\ndata: {train: x}\nmodel: {kind: program, entry: ./m, workspace: /w, inputs: 3, declared: {}}\n"))
	checkField(t, "declared in YAML", err, "model.declared")
}

func checkField(t *testing.T, what string, err error, field string) {
	t.Helper()
	if field == "" {
		if err != nil {
			t.Errorf("%s: %v", what, err)
		}
		return
	}
	var fe *FieldError
	if !errors.As(err, &fe) || fe.Field != field {
		t.Errorf("%s: got %v, want a FieldError on %s", what, err, field)
	}
}

func TestDeclaredTravelsInJSON(t *testing.T) {
	s := Spec{Model: ModelSpec{Kind: KindProgram, Declared: &Declared{Params: []DeclaredParam{{Name: "w", Shape: []int{2}}}, InitSHA256: "ab"}}}
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	var back Spec
	if err := json.Unmarshal(b, &back); err != nil || back.Model.Declared == nil || back.Model.Declared.InitSHA256 != "ab" {
		t.Fatalf("round trip: %s -> %+v %v", b, back.Model, err)
	}
}

// TestProgramTables: a program's declared tables are the job's embedding
// tables, their rows updated by the table's own optimizer or the job's,
// which must then update rows lazily; model.tables and model.dim are the
// built-in recommender's; a program's records may have no dense features.
func TestProgramTables(t *testing.T) {
	s, err := Parse([]byte("name: p\ndata: {train: x}\nmodel: {kind: program, entry: ./m, workspace: /w, inputs: 0, outputs: 1}\noptimizer: {kind: momentum}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Validate(); err != nil || len(s.EmbeddingTables()) != 0 {
		t.Fatalf("no tables declared yet: %v, tables %v", err, s.EmbeddingTables())
	}
	s.Model.Declared = &Declared{Params: []DeclaredParam{{Name: "w", Shape: []int{3}}},
		Tables: []DeclaredTable{{Name: "user", Dim: 8, Optimizer: OptimizerAdam}, {Name: "movie", Dim: 4}}}
	wantFieldError(t, s.Validate(), "optimizer.kind", "movie")
	s.Model.Declared.Tables[1].Optimizer = OptimizerAdagrad
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	if got := s.EmbeddingTables(); len(got) != 2 || got[1] != (model.RecTable{Field: "movie", Dim: 4}) || s.TableOptimizer("user") != OptimizerAdam {
		t.Fatalf("tables %v, user's optimizer %s", got, s.TableOptimizer("user"))
	}
	s.PserversMin, s.PserversMax = 1, 3
	if err := s.Validate(); err != nil {
		t.Fatalf("pserver bounds 1-3 with tables (rows re-shard): %v", err)
	}
	s.PserversMin, s.PserversMax = 0, 0
	s.Model.Dim = 4
	wantFieldError(t, s.Validate(), "model.tables", "declares its embedding tables")
}
