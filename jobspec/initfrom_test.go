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
