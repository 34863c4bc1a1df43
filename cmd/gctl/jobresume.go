package main

import (
	"context"
	"fmt"
	"math"
	"strings"

	"github.com/spf13/cobra"

	"github.com/gtrain/gtrain/api"
	"github.com/gtrain/gtrain/cmd/gctl/internal/render"
)

// resumeResult is `gctl job resume -o json`.
type resumeResult struct {
	Name          string       `json:"name"`
	State         api.JobState `json:"state"`
	PreviousState api.JobState `json:"previous_state"`
	FromStep      int64        `json:"from_step"`
	Passes        int          `json:"passes"`
	LearningRate  float64      `json:"learning_rate"`
	// PserverSteps: an async job's restart points, one per pserver.
	PserverSteps []int64 `json:"pserver_steps,omitempty"`
}

func (a *app) jobResumeCommand() *cobra.Command {
	var passes int
	var lr float64
	var resources []string
	cmd := &cobra.Command{
		Use:   "resume NAME [--passes N] [--learning-rate LR] [--resources ROLE.KEY=VALUE,...]",
		Short: "Continue a STOPPED or FAILED job from its newest checkpoint",
		Long: `Continue a STOPPED or FAILED sync job from its newest complete global
checkpoint: the job becomes PENDING, every one of its roles starts again, the
pservers restore the checkpoint and the master rolls the job back to it, as
after a crash of the whole job. The steps after the checkpoint are redone, so
every record is applied exactly once per pass, and unchanged, the job ends with
the model of a run that never stopped. --passes N (more than the passes it has
finished), --learning-rate LR and --resources (trainer.cpu=2,pserver.memory=2Gi,
trainer.gpu=1: ROLE trainer or pserver, KEY cpu, memory or gpu) change the spec
from there on; the job is placed anew, so its new resources must fit a node (a
job without checkpoint.dir: the node that holds its checkpoints). An event
records the resume and its checkpoint. Follow the job with "gctl job watch NAME".
A job that has not ended, SUCCEEDED, or has no complete global checkpoint (it
ended before its first; async: a pserver without a checkpoint) is refused with
exit 2.
An async job keeps no global checkpoint: each of its pservers wrote its own
when the job ended, and restarts from its newest; records are applied at least
once, as after any async crash (an update after a crashed pserver's last
checkpoint is lost with it).
With -o json: {"name", "state", "previous_state", "from_step", "passes", "learning_rate",
"pserver_steps" (async)}.`,
		Example: "  gctl job resume fit-a-line\n  gctl job resume fit-a-line --passes 50 --learning-rate 0.005\n  gctl job resume fit-a-line --resources trainer.cpu=2,pserver.memory=1Gi",
		Args:    exactArgs("NAME"),
		RunE: func(cmd *cobra.Command, args []string) error {
			name, err := jobNameArg(args)
			if err != nil {
				return err
			}
			req := &api.ResumeJobRequest{Name: name}
			if cmd.Flags().Changed("passes") {
				if passes < 1 {
					return usagef("--passes must be at least 1, got %d", passes)
				}
				n := int32(passes)
				req.Passes = &n
			}
			if cmd.Flags().Changed("learning-rate") {
				if !(lr > 0) || math.IsInf(lr, 0) {
					return usagef("--learning-rate must be a finite number > 0, got %g", lr)
				}
				req.LearningRate = &lr
			}
			for _, kv := range resources {
				if k, v, ok := strings.Cut(kv, "="); !ok || k == "" || v == "" {
					return usagef("--resources %q: want ROLE.KEY=VALUE, e.g. trainer.cpu=2", kv)
				}
			}
			req.Resources = resources
			return a.resumeJob(cmd.Context(), req)
		},
	}
	cmd.Flags().IntVar(&passes, "passes", 0, "the job's number of passes from now on (more than it has finished)")
	cmd.Flags().Float64Var(&lr, "learning-rate", 0, "the optimizer's learning rate from now on")
	cmd.Flags().StringSliceVar(&resources, "resources", nil, "resources from now on, ROLE.KEY=VALUE,... (trainer.cpu=2,pserver.memory=2Gi,trainer.gpu=1)")
	return cmd
}

func (a *app) resumeJob(ctx context.Context, req *api.ResumeJobRequest) error {
	client, s, done, err := a.connect()
	if err != nil {
		return err
	}
	defer done()
	resp, err := call(ctx, s, fmt.Sprintf("resume job %q", req.Name), func(ctx context.Context) (*api.ResumeJobResponse, error) {
		return client.ResumeJob(ctx, req)
	})
	if err != nil {
		return err
	}
	res := resumeResult{Name: req.Name, State: api.JobState(resp.GetState()), PreviousState: api.JobState(resp.GetPreviousState()),
		FromStep: resp.GetFromStep(), Passes: int(resp.GetPasses()), LearningRate: resp.GetLearningRate(), PserverSteps: resp.GetPserverSteps()}
	if a.output == render.OutputJSON {
		return render.WriteJSON(a.stdout, res)
	}
	from := fmt.Sprintf("global checkpoint step %d", res.FromStep)
	if len(res.PserverSteps) > 0 {
		from = fmt.Sprintf("each pserver's own newest checkpoint (steps %v, async)", res.PserverSteps)
	}
	_, err = fmt.Fprintf(a.stdout, "job %s %s -> %s: resumes from %s, %d passes, learning rate %g; follow it with gctl job watch %s\n",
		res.Name, res.PreviousState, res.State, from, res.Passes, res.LearningRate, res.Name)
	return err
}
