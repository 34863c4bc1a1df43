package jobspec

import (
	"testing"

	"github.com/gtrain/gtrain/model"
)

func TestInitFromValidation(t *testing.T) {
	base := "name: j\nmodel: {kind: mlp, inputs: 2, outputs: 2, hidden: [3]}\ndata: {train: /d/train-*}\n"
	checkFieldCases(t, base, []fieldCase{
		{"", ""},
		{"init_from: {job: a, pass: 2}\n", ""},
		{"init_from: {job: a}\n", ""},
		{"init_from: {job: a, pass: 0}\n", ""},
		{"init_from: {dir: /m/pass-00002, only: [w0, b0], freeze: [w0]}\n", ""},
		{"init_from: {pass: 2}\n", "init_from"},
		{"init_from: {job: a, dir: /m}\n", "init_from"},
		{"init_from: {dir: /m, pass: 1}\n", "init_from.pass"},
		{"init_from: {job: a, pass: -1}\n", "init_from.pass"},
		{"init_from: {job: a_b}\n", "init_from.job"},
		{"init_from: {job: j}\n", "init_from.job"},
		{"init_from: {job: a, only: [w9]}\n", "init_from.only[0]"},
		{"init_from: {job: a, freeze: [w0, w0]}\n", "init_from.freeze[1]"},
		{"init_from: {job: a, from: x}\n", "init_from.from"},
		{"init_from: {job: a, pass: 2, optimizer_state: true}\n", ""},
		{"init_from: {optimizer_state: true}\n", "init_from"},
	})
}

func TestCheckInitModelNamesTheParameter(t *testing.T) {
	want := []model.ParamSpec{{Name: "w0", Shape: []int{2, 3}}, {Name: "b0", Shape: []int{3}}}
	same := []model.ParamSpec{{Name: "w0", Shape: []int{2, 3}}, {Name: "b0", Shape: []int{3}}}
	if err := CheckInitModel(InitFromSpec{Dir: "/m"}, want, same, "/m"); err != nil {
		t.Fatal(err)
	}
	other := []model.ParamSpec{{Name: "w0", Shape: []int{2, 4}}, {Name: "b0", Shape: []int{3}}}
	wantFieldError(t, CheckInitModel(InitFromSpec{Dir: "/m"}, want, other, "/m"), "init_from", `"w0"`, "[2 4]", "[2 3]")
	// Loading only b0 ignores w0's shape.
	if err := CheckInitModel(InitFromSpec{Dir: "/m", Only: []string{"b0"}}, want, other, "/m"); err != nil {
		t.Fatal(err)
	}
	wantFieldError(t, CheckInitModel(InitFromSpec{Dir: "/m"}, want, other[1:], "/m"), "init_from", `"w0"`, "not in the model")
}

func TestCheckInitOptimizer(t *testing.T) {
	adam := OptimizerSpec{Kind: OptimizerAdam}
	kept := &model.OptimizerManifest{Kind: OptimizerAdam, Slots: make([][]model.ParamManifest, 2)}
	asks := InitFromSpec{Dir: "/m", OptimizerState: true}
	if err := CheckInitOptimizer(asks, adam, kept, "/m"); err != nil {
		t.Fatal(err)
	}
	if err := CheckInitOptimizer(InitFromSpec{Dir: "/m"}, adam, nil, "/m"); err != nil {
		t.Errorf("not asked for: %v", err)
	}
	wantFieldError(t, CheckInitOptimizer(asks, adam, nil, "/m"), "init_from.optimizer_state", "keeps no optimizer state")
	wantFieldError(t, CheckInitOptimizer(asks, OptimizerSpec{Kind: OptimizerMomentum}, kept, "/m"), "init_from.optimizer_state", "adam", "momentum")
	short := &model.OptimizerManifest{Kind: OptimizerAdam, Slots: make([][]model.ParamManifest, 1)}
	wantFieldError(t, CheckInitOptimizer(asks, adam, short, "/m"), "init_from.optimizer_state", "1 optimizer slots")
}

// TestCheckInitTables: a table the job loads must have the model's
// dimension (the error names the table and both dimensions); one the model
// lacks, or that init_from.only leaves out, is not checked.
func TestCheckInitTables(t *testing.T) {
	want := []model.RecTable{{Field: "user", Dim: 8}, {Field: "movie", Dim: 4}}
	have := []model.TableManifest{{Name: "user", Dim: 8}, {Name: "movie", Dim: 6}}
	wantFieldError(t, CheckInitTables(InitFromSpec{Dir: "/m"}, want, have, "/m"), "init_from", `"movie"`, "dimension 6", "wants 4")
	if err := CheckInitTables(InitFromSpec{Dir: "/m", Only: []string{"user"}}, want, have, "/m"); err != nil {
		t.Fatalf("movie left out by init_from.only: %v", err)
	}
	if err := CheckInitTables(InitFromSpec{Dir: "/m"}, want, have[:1], "/m"); err != nil {
		t.Fatalf("a table the model lacks: %v", err)
	}
}

// A recommender's init_from.only may name its tables, freeze may not.
func TestInitFromNamesTables(t *testing.T) {
	s := mustParse(t, "name: j\ndata: {train: /d/train-*}\noptimizer: {kind: adagrad, learning_rate: 0.1}\n"+
		"model: {kind: recommender, dim: 4, inputs: 0, hidden: [8], outputs: 1}\ninit_from: {dir: /m, only: [movie, w0]}\n")
	if err := s.checkIDFields("data.train", "/d/train-0", []string{"user", "movie"}); err != nil {
		t.Fatal(err)
	}
	if err := s.validateInitFrom(); err != nil {
		t.Fatalf("init_from.only naming a table: %v", err)
	}
	s.InitFrom.Freeze = []string{"movie"}
	wantFieldError(t, s.validateInitFrom(), "init_from.freeze[0]", `embedding table "movie"`, "cannot be frozen")
}
