package controlapi

import (
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/gtrain/gtrain/api"
	"github.com/gtrain/gtrain/coord"
	"github.com/gtrain/gtrain/coord/schema"
	"github.com/gtrain/gtrain/jobspec"
)

// resumable is a STOPPED sync job of 10 passes, 2 finished, with global
// checkpoints up to step 50 (pass 1).
func resumable(t *testing.T) *coord.Reopened {
	t.Helper()
	spec := jobspec.Spec{Name: "j", Mode: jobspec.ModeSync, Passes: 10,
		Model: jobspec.ModelSpec{Kind: "linear", Inputs: 13, Outputs: 1}, Data: jobspec.DataSpec{Train: "/d/train-*"}}
	spec.ApplyDefaults()
	spec.FixGlobalBatch()
	if err := spec.Validate(); err != nil {
		t.Fatal(err)
	}
	return &coord.Reopened{Record: schema.JobRecord{Spec: spec}, State: schema.StateRecord{State: api.StateStopped},
		Global: schema.GlobalCheckpoint{Step: 50, Pass: 1, Steps: []int64{25, 50}}}
}

func TestPlanResumeRefuses(t *testing.T) {
	cases := []struct {
		name   string
		change func(*coord.Reopened, *api.ResumeJobRequest)
		want   string
	}{
		{"running", func(r *coord.Reopened, _ *api.ResumeJobRequest) { r.State.State = api.StateRunning },
			"job j is RUNNING: only a STOPPED or FAILED job can be resumed"},
		{"pending", func(r *coord.Reopened, _ *api.ResumeJobRequest) { r.State.State = api.StatePending }, "job j is PENDING"},
		{"succeeded", func(r *coord.Reopened, _ *api.ResumeJobRequest) { r.State.State = api.StateSucceeded },
			"job j SUCCEEDED: only a STOPPED or FAILED job can be resumed; to train its model further, start a new job with init_from"},
		{"no checkpoint", func(r *coord.Reopened, _ *api.ResumeJobRequest) { r.Global = schema.GlobalCheckpoint{} },
			"job j has no complete global checkpoint to resume from"},
		{"passes done", func(_ *coord.Reopened, q *api.ResumeJobRequest) { q.Passes = new(int32(2)) },
			"--passes 2: job j has finished 2 passes already; give more than 2"},
		{"bad learning rate", func(_ *coord.Reopened, q *api.ResumeJobRequest) { q.LearningRate = new(-1.0) },
			"optimizer.learning_rate"},
		{"resources not a number", func(_ *coord.Reopened, q *api.ResumeJobRequest) { q.Resources = []string{"trainer.cpu=two"} },
			`resources.trainer.cpu: "two" is not a number`},
		{"resources of no role", func(_ *coord.Reopened, q *api.ResumeJobRequest) { q.Resources = []string{"master.cpu=1"} },
			"resources.master.cpu: names no role"},
		{"resources out of range", func(_ *coord.Reopened, q *api.ResumeJobRequest) { q.Resources = []string{"pserver.memory=lots"} },
			"resources.pserver.memory"},
		{"resources without a value", func(_ *coord.Reopened, q *api.ResumeJobRequest) { q.Resources = []string{"trainer.cpu"} },
			"want ROLE.KEY=VALUE"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r, req := resumable(t), &api.ResumeJobRequest{Name: "j"}
			c.change(r, req)
			_, err := planResume("j", r, 2, req, nil)
			if status.Code(err) != codes.InvalidArgument || !strings.Contains(status.Convert(err).Message(), c.want) {
				t.Errorf("planResume: %v, want InvalidArgument saying %q", err, c.want)
			}
		})
	}
}

func TestPlanResumeOverrides(t *testing.T) {
	for _, state := range []api.JobState{api.StateStopped, api.StateFailed} {
		r := resumable(t)
		r.State.State = state
		changes, err := planResume("j", r, 2, &api.ResumeJobRequest{Name: "j"}, nil)
		if err != nil || len(changes) != 0 || r.Record.Spec.Passes != 10 {
			t.Errorf("%s, no overrides: changes %v, passes %d, err %v; want none, 10, nil", state, changes, r.Record.Spec.Passes, err)
		}
	}
	r := resumable(t)
	changes, err := planResume("j", r, 2, &api.ResumeJobRequest{Name: "j", Passes: new(int32(3)), LearningRate: new(0.5)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(changes, ", "); got != "passes 10 -> 3, learning_rate 0.01 -> 0.5" {
		t.Errorf("changes %q", got)
	}
	if s := r.Record.Spec; s.Passes != 3 || s.Optimizer.LearningRate != 0.5 {
		t.Errorf("record after overrides: passes %d, learning rate %g; want 3, 0.5", s.Passes, s.Optimizer.LearningRate)
	}
}

func TestPlanResumeResources(t *testing.T) {
	r := resumable(t)
	changes, err := planResume("j", r, 2, &api.ResumeJobRequest{Name: "j",
		Resources: []string{"trainer.cpu=2", "pserver.memory=1Gi", "trainer.gpu=1"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(changes, ", "); !strings.Contains(got, "resources.trainer.cpu ") || !strings.Contains(got, "-> 2") ||
		!strings.Contains(got, "resources.pserver.memory (unset) -> 1Gi") || !strings.Contains(got, "resources.trainer.gpu 0 -> 1") {
		t.Errorf("changes %q", got)
	}
	res := r.Record.Spec.Resources
	if res.Trainer.CPU != 2 || res.Pserver.Memory != "1Gi" || res.Trainer.GPU != 1 {
		t.Errorf("resources after the resume: %+v", res)
	}
}

func TestPlanResumeAsync(t *testing.T) {
	r := resumable(t)
	r.Record.Spec.Mode, r.Global = jobspec.ModeAsync, schema.GlobalCheckpoint{}
	if _, err := planResume("j", r, 2, &api.ResumeJobRequest{Name: "j"}, []int64{40, 37}); err != nil {
		t.Errorf("async job whose pservers both checkpointed: %v, want resumed", err)
	}
	_, err := planResume("j", r, 2, &api.ResumeJobRequest{Name: "j"}, []int64{40, -1})
	want := "job j is async and pserver-1 has no checkpoint to restart from"
	if status.Code(err) != codes.InvalidArgument || !strings.Contains(status.Convert(err).Message(), want) {
		t.Errorf("async job, pserver-1 without a checkpoint: %v, want InvalidArgument saying %q", err, want)
	}
}
