package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/gtrain/gtrain/api"
	"github.com/gtrain/gtrain/cmd/gctl/internal/render"
)

// scaleResult is `gctl job scale -o json`.
type scaleResult struct {
	Name             string `json:"name"`
	Trainers         int    `json:"trainers"`
	PreviousTrainers int    `json:"previous_trainers"`
	TrainersMin      int    `json:"trainers_min"`
	TrainersMax      int    `json:"trainers_max"`
	Pservers         int    `json:"pservers"`
	PreviousPservers int    `json:"previous_pservers"`
}

func (a *app) jobScaleCommand() *cobra.Command {
	var trainers, pservers int
	cmd := &cobra.Command{
		Use:   "scale NAME [--trainers N] [--pservers M]",
		Short: "Change a job's desired number of trainers or pservers within its bounds",
		Long: `Change the desired number of trainers of a pending or running job, within the
bounds of its spec (trainers: {count, min, max}). New trainers join at the next
step; the highest-numbered trainers leave on a scale-down; the others never
restart. In sync mode the model does not depend on the trainer count.
--pservers M (sync jobs, within pservers: {count, min, max}) re-shards the
parameters, a recommender's embedding rows and their optimizer state onto M
pservers: at the next global checkpoint training pauses, the pservers load the
new cut of it and the trainers switch to it without a restart; the model is
the same as with a fixed count.
"gctl job status" shows "re-sharding" until training resumes, then the pause.
With -o json: {"name", "trainers", "previous_trainers", "trainers_min", "trainers_max",
"pservers", "previous_pservers"}.`,
		Example: "  gctl job scale fit-a-line --trainers 4\n  gctl job scale fit-a-line --pservers 3",
		Args:    exactArgs("NAME"),
		RunE: func(cmd *cobra.Command, args []string) error {
			name, err := jobNameArg(args)
			if err != nil {
				return err
			}
			req := &api.ScaleJobRequest{Name: name}
			flags := cmd.Flags()
			if !flags.Changed("trainers") && !flags.Changed("pservers") {
				return usagef("job scale needs --trainers N (or --pservers M)")
			}
			if flags.Changed("trainers") {
				if trainers < 1 {
					return usagef("--trainers must be at least 1, got %d", trainers)
				}
				n := int32(trainers)
				req.Trainers = &n
			}
			if flags.Changed("pservers") {
				if pservers < 1 {
					return usagef("--pservers must be at least 1, got %d", pservers)
				}
				m := int32(pservers)
				req.Pservers = &m
			}
			return a.scaleJob(cmd.Context(), req)
		},
	}
	cmd.Flags().IntVar(&trainers, "trainers", 0, "the new desired number of trainers")
	cmd.Flags().IntVar(&pservers, "pservers", 0, "the new desired number of pservers (sync jobs: re-shards at the next global checkpoint)")
	return cmd
}

func (a *app) scaleJob(ctx context.Context, req *api.ScaleJobRequest) error {
	client, s, done, err := a.connect()
	if err != nil {
		return err
	}
	defer done()
	resp, err := call(ctx, s, fmt.Sprintf("scale job %q", req.Name), func(ctx context.Context) (*api.ScaleJobResponse, error) {
		return client.ScaleJob(ctx, req)
	})
	if err != nil {
		return err
	}
	res := scaleResult{Name: req.Name, Trainers: int(resp.GetTrainers()), PreviousTrainers: int(resp.GetPreviousTrainers()),
		TrainersMin: int(resp.GetTrainersMin()), TrainersMax: int(resp.GetTrainersMax()), Pservers: int(resp.GetPservers()),
		PreviousPservers: int(resp.GetPreviousPservers())}
	if a.output == render.OutputJSON {
		return render.WriteJSON(a.stdout, res)
	}
	if req.Trainers != nil || req.Pservers == nil {
		if _, err := fmt.Fprintf(a.stdout, "job %s: trainers %d -> %d (bounds [%d, %d])\n", res.Name, res.PreviousTrainers, res.Trainers, res.TrainersMin, res.TrainersMax); err != nil {
			return err
		}
	}
	if req.Pservers != nil {
		_, err = fmt.Fprintf(a.stdout, "job %s: pservers %d -> %d (re-sharded at the next global checkpoint; see gctl job status)\n", res.Name, res.PreviousPservers, res.Pservers)
	}
	return err
}
