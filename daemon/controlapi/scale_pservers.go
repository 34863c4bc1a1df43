package controlapi

import (
	"context"
	"fmt"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/gtrain/gtrain/auth"
	"github.com/gtrain/gtrain/coord"
	"github.com/gtrain/gtrain/coord/schema"
	"github.com/gtrain/gtrain/jobspec"
)

// checkPserverScale refuses a pserver count the job cannot take: async
// jobs (re-sharding needs the global checkpoints of sync mode), counts
// outside the spec's bounds, and a share that outgrows the memory the spec
// states for a pserver.
func checkPserverScale(rec *schema.JobRecord, name string, m int) error {
	spec := rec.Spec
	if m == spec.Pservers {
		return nil
	}
	if spec.Mode != jobspec.ModeSync {
		return status.Errorf(codes.InvalidArgument,
			"--pservers %d: job %s runs in %s mode; pservers are re-sharded only in sync mode (at a global checkpoint); it keeps its %d pservers",
			m, name, spec.Mode, spec.Pservers)
	}
	if lo, hi := spec.PserverBounds(); m < lo || m > hi {
		return status.Errorf(codes.InvalidArgument,
			"--pservers %d is outside job %s's bounds [min %d, max %d] (pservers: {count, min, max} in its spec)", m, name, lo, hi)
	}
	stated, err := spec.Resources.Pserver.MemoryBytes()
	if err != nil || stated <= 0 {
		return nil // the scheduler sizes each pserver by its share
	}
	scaled := spec
	scaled.Pservers = m
	need, err := scaled.MemoryNeed()
	if err == nil && need.Pserver > stated {
		return status.Errorf(codes.InvalidArgument,
			"--pservers %d: each pserver would hold %s of parameters and optimizer state, more than resources.pserver.memory %s of job %s",
			m, jobspec.FormatMemory(need.Pserver), jobspec.FormatMemory(stated), name)
	}
	return nil
}

// scalePservers records the pserver count wanted; the job's master
// re-shards (master/recovery/reshard.go). It returns the count before and after.
func (c *Server) scalePservers(ctx context.Context, name string, who auth.Identity, m, current int) ([2]int, error) {
	req, _, err := coord.GetReshard(ctx, c.cli, name)
	if err != nil {
		return [2]int{}, etcdUnavailable("scale job "+name, err)
	}
	prev := current
	if req.Pservers > 0 {
		prev = req.Pservers // the count wanted so far, maybe not reached yet
	}
	if prev == m {
		return [2]int{prev, m}, nil
	}
	if err := coord.SetReshardRequest(ctx, c.cli, name, schema.ReshardRequest{Pservers: m, By: who.String(), Requested: c.clock.Now().UTC()}); err != nil {
		return [2]int{}, etcdUnavailable("scale job "+name, err)
	}
	what := fmt.Sprintf("pservers scaling from %d to %d requested by %s: re-sharding at the next global checkpoint", prev, m, who)
	if err := coord.AppendEvent(ctx, c.cli, name, what); err != nil {
		c.log.Warn("cannot record job event", "job", name, "err", err)
	}
	return [2]int{prev, m}, nil
}
