package main

import (
	"fmt"
	"strings"

	"github.com/gtrain/gtrain/bench"
	"github.com/gtrain/gtrain/model"
)

// measureRecommender is recommender (records/s of the built-in
// recommender's job against single-process PyTorch on the same model,
// records, batch and passes), recommender_rmse (its test RMSE against
// PyTorch's) and recommender_rmse_optimum (against the planted model's,
// optimum.json's rmse_test). Without PyTorch the last is still measured.
func measureRecommender(t *table, bin string, quick bool) error {
	c := bench.RecWorkload
	if quick {
		c = bench.RecQuick
	}
	r, err := bench.MeasureRecommender(bin, "scripts", c, needTorch.present())
	if err != nil {
		return err
	}
	sides := fmt.Sprintf("gctl data synth movielens: %d users, %d movies, %d ratings (a fifth held out), planted dim %d, noise %g; recommender dim %d (the side fields' tables dim %d), hidden %v, interaction %s, adagrad %g, batch %d, %d passes; gtrain: %s, 1 trainer of cpu: 1 (1 thread), 1 pserver, records/s of its passes as its history reports them (evaluation at pass ends included)",
		c.Users, c.Movies, c.Ratings, c.PlantedDim, c.Noise, c.Dim, bench.RecSideDim, c.Hidden, c.Interaction, c.LR, c.Batch, c.Passes, model.Kernels())
	switch {
	case r.Torch == nil:
		t.notMeasured("recommender, recommender_rmse (against PyTorch)", needTorch.missing())
	case !bench.PeerAtItsBest(r.Torch.BLAS):
		t.notMeasured("recommender, recommender_rmse (against PyTorch)", slowPeer(r.Torch.BLAS).missing())
	default:
		peer := fmt.Sprintf("peer, not a ceiling: single-process PyTorch %s on %d thread, BLAS %s (scripts/torch_recommender.py: nn.EmbeddingBag sum, sparse, Adagrad), the same records exported from the job's shards, shuffled per pass; %s", r.Torch.Torch, r.Torch.Threads, strings.Join(r.Torch.BLAS, " "), bench.KernelsAgainst(r.Torch.BLAS))
		t.add(bench.Result{Name: "recommender", Value: r.RecordsPerS, Unit: "records/s", Ceiling: r.Torch.RecordsPerS,
			Note: fmt.Sprintf("%s; %s; goal ratio >= 1.0", peer, sides)})
		t.add(bench.Result{Name: "recommender_rmse", Value: 1000 * r.TestRMSE, Unit: "mRMSE", Ceiling: 1000 * r.Torch.TestRMSE,
			Note: fmt.Sprintf("lower is better: test RMSE after the last pass (x1000, for the table's one decimal) against PyTorch's; %s; %s; goal ratio <= 1.01", peer, sides)})
	}
	t.add(bench.Result{Name: "recommender_rmse_optimum", Value: 1000 * r.TestRMSE, Unit: "mRMSE", Ceiling: 1000 * r.Optimum.RMSETest,
		Note: fmt.Sprintf("lower is better: test RMSE after the last pass (x1000) against the planted model's on the same test records (optimum.json rmse_test; the best constant: %.4f); %s; goal ratio <= 1.05", r.Optimum.RMSEConstant, sides)})
	return nil
}
