package controlapi

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/gtrain/gtrain/api"
	"github.com/gtrain/gtrain/checkpoint"
	"github.com/gtrain/gtrain/coord"
	"github.com/gtrain/gtrain/jobspec"
)

// ResumeJob continues a STOPPED or FAILED sync job from its newest complete
// global checkpoint (an async job: each pserver from its own newest, written
// when the job ended), by the path a master successor takes: the job goes back
// to PENDING with its master state and checkpoints kept, its worker records
// gone and its workers unplaced (placed anew, as a new job: room, GPUs and
// quota are checked again; on its home node without checkpoint.dir), so
// every agent starts its roles afresh; the pservers restore the global
// checkpoint and the new master, whose stored state is past it, rolls the
// job back to it (recovery's start check), as after a crash of everything. The records applied after the checkpoint are
// undone with it, so each is applied exactly once.
func (c *Server) ResumeJob(ctx context.Context, req *api.ResumeJobRequest) (*api.ResumeJobResponse, error) {
	name := req.GetName()
	snap, err := c.readJob(ctx, name)
	if err != nil {
		return nil, err
	}
	who := caller(ctx)
	if err := mayChangeJob(who, name, snap.Record, "resume"); err != nil {
		return nil, err
	}
	finished := 0
	if snap.Progress != nil {
		finished = snap.Progress.Pass
	}
	var changes []string
	var psSteps []int64 // async: each pserver's restart point
	var refused error   // planResume's or waitWorkersGone's answer, as is
	r, err := coord.ReopenJob(ctx, c.cli, name, func(r *coord.Reopened) error {
		if r.Record.Spec.Mode == jobspec.ModeAsync {
			var err error
			if psSteps, err = c.pserverCheckpointSteps(ctx, name, r.Record.Spec.Pservers); err != nil {
				refused = etcdUnavailable("resume job "+name, err)
				return refused
			}
		}
		if changes, refused = planResume(name, r, finished, req, psSteps); refused != nil {
			return refused
		}
		// Roles that still exit would write their last records after the
		// reopen deleted them (and one that exited says it must not run again).
		refused = c.waitWorkersGone(ctx, name, "gctl job resume "+name)
		return refused
	})
	switch {
	case refused != nil:
		return nil, refused
	case errors.Is(err, coord.ErrNoJob):
		return nil, jobNotFound(name)
	case err != nil:
		return nil, etcdUnavailable("resume job "+name, err)
	}
	// Not the record's pass: that is the master's when it declared the
	// step, maybe past the step's own (the rollback's event names that).
	from := fmt.Sprintf("global checkpoint step %d", r.Global.Step)
	if psSteps != nil {
		from = fmt.Sprintf("each pserver's own newest checkpoint (steps %v)", psSteps)
	}
	what := fmt.Sprintf("job resumed by %s via %s from %s, after it ended %s", who, c.node, from, r.State.State)
	if len(changes) > 0 {
		what += "; " + strings.Join(changes, ", ")
	}
	if err := coord.AppendEvent(ctx, c.cli, name, what); err != nil {
		c.log.Warn("cannot record job event", "job", name, "err", err)
	}
	c.log.Info("job resumed", "job", name, "step", r.Global.Step)
	spec := r.Record.Spec
	return &api.ResumeJobResponse{State: string(api.StatePending), PreviousState: string(r.State.State),
		FromStep: r.Global.Step, Passes: int32(spec.Passes), LearningRate: spec.Optimizer.LearningRate, PserverSteps: psSteps}, nil
}

// planResume decides whether the job r describes may resume, and applies
// the request's overrides to its record; finished is the passes it has
// finished, psSteps (async) each pserver's newest checkpoint step (-1:
// none). It returns the changes in words ("passes 3 -> 5",
// "resources.trainer.cpu 1 -> 2"), or an
// InvalidArgument status naming the problem and what to do instead.
func planResume(name string, r *coord.Reopened, finished int, req *api.ResumeJobRequest, psSteps []int64) ([]string, error) {
	spec := &r.Record.Spec
	switch st := r.State.State; {
	case st == api.StateSucceeded:
		return nil, status.Errorf(codes.InvalidArgument,
			"job %s SUCCEEDED: only a STOPPED or FAILED job can be resumed; to train its model further, start a new job with init_from: {job: %s}", name, name)
	case st != api.StateStopped && st != api.StateFailed:
		return nil, status.Errorf(codes.InvalidArgument,
			"job %s is %s: only a STOPPED or FAILED job can be resumed; it has not ended (see gctl job status %s)", name, st, name)
	case spec.Mode == jobspec.ModeAsync:
		if i := slices.Index(psSteps, -1); i >= 0 {
			return nil, status.Errorf(codes.InvalidArgument,
				"job %s is async and pserver-%d has no checkpoint to restart from (it ended before its first; checkpoint.every is %q): start it anew (`gctl job stop %s --purge` frees the name)",
				name, i, spec.Checkpoint.Every, name)
		}
	case len(r.Global.Steps) == 0 || r.Global.Step <= 0:
		return nil, status.Errorf(codes.InvalidArgument,
			"job %s has no complete global checkpoint to resume from (it ended before its first; checkpoint.every is %q): start it anew (`gctl job stop %s --purge` frees the name)",
			name, spec.Checkpoint.Every, name)
	}
	var changes []string
	if req.Passes != nil {
		n := int(req.GetPasses())
		if n <= finished {
			return nil, status.Errorf(codes.InvalidArgument,
				"--passes %d: job %s has finished %d passes already; give more than %d", n, name, finished, finished)
		}
		if n != spec.Passes {
			changes = append(changes, fmt.Sprintf("passes %d -> %d", spec.Passes, n))
			spec.Passes = n
		}
	}
	if req.LearningRate != nil && req.GetLearningRate() != spec.Optimizer.LearningRate {
		changes = append(changes, fmt.Sprintf("learning_rate %g -> %g", spec.Optimizer.LearningRate, req.GetLearningRate()))
		spec.Optimizer.LearningRate = req.GetLearningRate()
	}
	for _, kv := range req.GetResources() {
		path, value, ok := strings.Cut(kv, "=")
		if !ok {
			return nil, status.Errorf(codes.InvalidArgument, "--resources %q: want ROLE.KEY=VALUE, e.g. trainer.cpu=2", kv)
		}
		old, err := spec.SetResource(path, value)
		if err != nil {
			return nil, status.Error(codes.InvalidArgument, err.Error())
		}
		if old != value {
			changes = append(changes, fmt.Sprintf("resources.%s %s -> %s", path, old, value))
		}
	}
	if err := spec.Validate(); err != nil {
		return nil, status.Error(codes.InvalidArgument, err.Error())
	}
	return changes, nil
}

// pserverCheckpointSteps is, for pserver indexes 0..n-1 of job, the step of
// its newest checkpoint record (an async job's restart point), -1 where it
// has none: the records the pservers restore from (pserver.restoreOwn).
func (c *Server) pserverCheckpointSteps(ctx context.Context, job string, n int) ([]int64, error) {
	rec := checkpoint.NewEtcdRecorder(c.cli, func(i int) string { return coord.CheckpointRecordKey(job, i) })
	steps := make([]int64, n)
	for i := range steps {
		r, _, found, err := rec.Load(ctx, i)
		switch {
		case err != nil:
			return nil, err
		case !found:
			steps[i] = -1
		default:
			steps[i] = r.Step
		}
	}
	return steps, nil
}
