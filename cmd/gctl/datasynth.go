package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/gtrain/gtrain/cmd/gctl/internal/render"
	"github.com/gtrain/gtrain/dataset"
)

func (a *app) dataSynthCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "synth",
		Short: "Generate data sets with a known best loss",
	}
	asGroup(cmd)
	cmd.AddCommand(a.dataSynthMovieLensCommand())
	return cmd
}

func (a *app) dataSynthMovieLensCommand() *cobra.Command {
	o := dataset.SynthOptions{}
	cmd := &cobra.Command{
		Use:   "movielens --out DIR [--users U] [--movies M] [--ratings R] [--dim K] [--noise S] [--seed N]",
		Short: "Write MovieLens-shaped files from planted user and movie factors",
		Long: `Write ratings.dat, users.dat and movies.dat in ml-1m's layout into DIR, drawn
from a planted model: user u rates movie m mean + b_u + b_m + p_u·q_m plus
Gaussian noise of standard deviation --noise (docs/reference.md#movielens-records).
Ratings are continuous, with 3 decimals and not clipped to 1..5, so that no model
can beat the noise but by chance; gender, age, occupation, zip and genres are
drawn at random and carry no signal. Every user and movie is in users.dat and
movies.dat; the (user, movie) pairs are distinct and grouped by user, as in ml-1m.

Beside them: planted.json (the planted model) and optimum.json, the planted
model's RMSE on the ratings as written: rmse_all over all of them, rmse_test
over the test part that ` + "`gctl data convert --format movielens --test-fraction X --seed S`" + `
cuts with --test-fraction X and --split-seed S, and rmse_constant, the error of
predicting the mean rating. The same options write the same bytes.

This command runs locally; it does not contact the agent. With -o json: optimum.json.`,
		Example: `  gctl data synth movielens --out data/ml-synth
  gctl data convert --format movielens --input data/ml-synth --out data/ml/ml --shards 4 --test-fraction 0.2`,
		Args: exactArgs(),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if o.Dir == "" {
				return usagef("data synth movielens needs --out DIR")
			}
			opt, err := dataset.SynthMovieLens(o)
			if err != nil {
				return fmt.Errorf("data synth movielens: %w", err)
			}
			if a.output == render.OutputJSON {
				return render.WriteJSON(a.stdout, opt)
			}
			_, err = fmt.Fprintf(a.stdout, "wrote %d ratings of %d users and %d movies to %s\n"+
				"planted optimum: RMSE %.4f over all ratings, %.4f over the %d test records of --test-fraction %v --seed %d (the mean rating alone: %.4f)\n",
				opt.Ratings, o.Users, o.Movies, o.Dir, opt.RMSEAll, opt.RMSETest, opt.TestRecords, o.TestFraction, o.SplitSeed, opt.RMSEConstant)
			return err
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.Dir, "out", "", "directory to write into (created)")
	f.IntVar(&o.Users, "users", 600, "users, ids 1..U")
	f.IntVar(&o.Movies, "movies", 400, "movies, ids 1..M")
	f.IntVar(&o.Ratings, "ratings", 50000, "ratings: distinct (user, movie) pairs, at most half of U × M")
	f.IntVar(&o.Dim, "dim", 8, "dimension of the planted user and movie factors")
	f.Float64Var(&o.Noise, "noise", 0.5, "standard deviation of the noise added to each planted rating")
	f.Uint64Var(&o.Seed, "seed", 1, "seed of everything drawn")
	f.Float64Var(&o.TestFraction, "test-fraction", 0.2, "the --test-fraction of the convert whose test part optimum.json's rmse_test covers")
	f.Uint64Var(&o.SplitSeed, "split-seed", 1, "the --seed of that convert")
	return cmd
}
