package controlapi

import (
	"context"
	"errors"
	"fmt"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/gtrain/gtrain/api"
	"github.com/gtrain/gtrain/auth"
	"github.com/gtrain/gtrain/coord"
	"github.com/gtrain/gtrain/coord/schema"
)

// errOutOfBounds refuses a count outside the spec's bounds.
var errOutOfBounds = errors.New("count out of bounds")

// ScaleJob changes the desired trainer count of a job within the bounds of
// its spec. The count lives in the job record's spec: the scheduler places
// trainer-N for N up to it and unplaces the others (the highest names go
// first), and the master takes joins and leaves at step boundaries.
// --pservers records the pserver count wanted (scale_pservers.go): the
// master of a sync job re-shards at its next global checkpoint.
func (c *Server) ScaleJob(ctx context.Context, req *api.ScaleJobRequest) (*api.ScaleJobResponse, error) {
	name := req.GetName()
	snap, err := c.readJob(ctx, name)
	if err != nil {
		return nil, err
	}
	who := caller(ctx)
	if err := mayChangeJob(who, name, snap.Record, "scale"); err != nil {
		return nil, err
	}
	spec := snap.Record.Spec
	if req.Pservers != nil {
		if err := checkPserverScale(snap.Record, name, int(req.GetPservers())); err != nil {
			return nil, err
		}
	}
	if st, err := coord.JobState(ctx, c.cli, name); err != nil {
		return nil, etcdUnavailable("scale job "+name, err)
	} else if api.Terminal(st.State) {
		return nil, status.Errorf(codes.InvalidArgument, "job %s is %s: only a pending or running job can be scaled", name, st.State)
	}
	var pservers [2]int // previous, now
	if req.Pservers != nil {
		if pservers, err = c.scalePservers(ctx, name, who, int(req.GetPservers()), spec.Pservers); err != nil {
			return nil, err
		}
	}
	resp, err := c.scaleTrainers(ctx, req, snap.Record, who)
	if err != nil {
		return nil, err
	}
	if req.Pservers != nil {
		resp.PreviousPservers, resp.Pservers = int32(pservers[0]), int32(pservers[1])
	}
	return resp, nil
}

// scaleTrainers applies --trainers (if given) and answers with the counts.
func (c *Server) scaleTrainers(ctx context.Context, req *api.ScaleJobRequest, rec *schema.JobRecord, who auth.Identity) (*api.ScaleJobResponse, error) {
	name, spec := req.GetName(), rec.Spec
	if req.Trainers == nil {
		return scaleResponse(spec.Trainers, spec.Trainers, rec), nil
	}
	n := int(req.GetTrainers())
	prev, err := coord.SetTrainerCount(ctx, c.cli, name, n, func(rec *schema.JobRecord) error {
		lo, hi := rec.Spec.TrainerBounds()
		if n < lo || n > hi {
			return fmt.Errorf("--trainers %d is outside job %s's bounds [min %d, max %d] (trainers: {count, min, max} in its spec): %w",
				n, name, lo, hi, errOutOfBounds)
		}
		return nil
	})
	if errors.Is(err, errOutOfBounds) {
		return nil, status.Error(codes.InvalidArgument, err.Error())
	}
	if errors.Is(err, coord.ErrNoJob) {
		return nil, jobNotFound(name)
	}
	if err != nil {
		return nil, etcdUnavailable("scale job "+name, err)
	}
	if prev != n {
		what := fmt.Sprintf("trainers scaled from %d to %d by %s", prev, n, who)
		if err := coord.AppendEvent(ctx, c.cli, name, what); err != nil {
			c.log.Warn("cannot record job event", "job", name, "err", err)
		}
	}
	return scaleResponse(n, prev, rec), nil
}

func scaleResponse(n, prev int, rec *schema.JobRecord) *api.ScaleJobResponse {
	lo, hi := rec.Spec.TrainerBounds()
	return &api.ScaleJobResponse{Trainers: int32(n), PreviousTrainers: int32(prev), TrainersMin: int32(lo), TrainersMax: int32(hi),
		Pservers: int32(rec.Spec.Pservers), PreviousPservers: int32(rec.Spec.Pservers)}
}
