package specyaml

import (
	"reflect"
	"strings"
	"testing"

	"github.com/gtrain/gtrain/jobspec"
)

// A spec written by Marshal parses back to the spec it was made from.
func TestMarshalRoundTrips(t *testing.T) {
	off, zero := false, 0.0
	for _, s := range []jobspec.Spec{
		{Name: "plain", Mode: jobspec.ModeSync, Trainers: 2, Pservers: 1, Passes: 3, BatchSize: 20, Seed: 1,
			Model:     jobspec.ModelSpec{Kind: "mlp", Inputs: 13, Outputs: 1, Hidden: []int{30, 20}},
			Optimizer: jobspec.OptimizerSpec{Kind: jobspec.OptimizerMomentum, LearningRate: 0.01, Momentum: &zero},
			Data:      jobspec.DataSpec{Train: "data/housing-train-*", Test: "data/housing-test-*", Shuffle: &off},
			Resources: jobspec.ResourcesSpec{Trainer: jobspec.Resource{CPU: 0.5, Memory: "64Mi"}}},
		{Name: "elastic", Mode: jobspec.ModeSync, Trainers: 1, TrainersMin: 1, TrainersMax: 4, Pservers: 2, PserversMin: 1, PserversMax: 3,
			Passes: 30, BatchSize: 10, GlobalBatch: 40, Seed: 1,
			Model:      jobspec.ModelSpec{Kind: "linear", Inputs: 13, Outputs: 1},
			Optimizer:  jobspec.OptimizerSpec{Kind: jobspec.OptimizerSGD, LearningRate: 0.01},
			Data:       jobspec.DataSpec{Train: "data/housing-train-*", Test: "data/housing-test-*"},
			Checkpoint: jobspec.CheckpointSpec{Every: "50", Keep: 2, Dir: "/tmp/ck"},
			Restarts:   jobspec.RestartsSpec{HungAfter: "5s"},
			Stragglers: jobspec.StragglersSpec{Factor: 100, MinWait: "1h"}},
	} {
		doc := Marshal(s)
		got, err := jobspec.Parse([]byte(doc))
		if err != nil {
			t.Fatalf("%s: %v\n%s", s.Name, err, doc)
		}
		want, err := jobspec.Parse([]byte(doc))
		if err != nil {
			t.Fatal(err)
		}
		*want = s
		want.ApplyDefaults()
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: parsed back as\n%+v\nwant\n%+v\nfrom\n%s", s.Name, *got, *want, doc)
		}
	}
}

// Fields left at zero are left out, as a user leaves them out.
func TestMarshalLeavesOutZeroFields(t *testing.T) {
	doc := Marshal(jobspec.Spec{Name: "x", Passes: 1})
	if doc != "name: x\npasses: 1\n" {
		t.Errorf("got\n%s", doc)
	}
	if strings.Contains(Marshal(jobspec.Spec{Trainers: 2}), "count") {
		t.Error("a count without bounds written in the {count, min, max} form")
	}
}
