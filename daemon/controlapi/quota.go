package controlapi

import (
	"context"
	"math"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/gtrain/gtrain/api"
	"github.com/gtrain/gtrain/auth"
	"github.com/gtrain/gtrain/coord"
	"github.com/gtrain/gtrain/coord/schema"
	"github.com/gtrain/gtrain/daemon/scheduler"
)

// GetQuota answers a user's quota and what the user's jobs with placed
// workers ask now. A caller reads its own quota (no user, or its name);
// another user's needs admin.
func (c *Server) GetQuota(ctx context.Context, req *api.QuotaRequest) (*api.Document, error) {
	who := caller(ctx)
	user := req.GetUser()
	if user == "" {
		user = who.Name
	}
	if user != who.Name && !who.Role.Allows(auth.Admin) {
		return nil, status.Errorf(codes.PermissionDenied,
			"%s may not read the quota of user %s: a user reads its own quota (`gctl quota get`), another's needs admin", who, user)
	}
	return c.quotaRow(ctx, user)
}

// SetQuota replaces a user's quota (admin only: controlRules). The
// scheduler reads it on its next pass.
func (c *Server) SetQuota(ctx context.Context, req *api.SetQuotaRequest) (*api.Document, error) {
	user := req.GetUser()
	if !coord.QuotaUserOK(user) {
		return nil, status.Errorf(codes.InvalidArgument, "user %q cannot have a quota: name a user (a client certificate's name, or anonymous) without '/'", user)
	}
	if err := checkQuotaLimits(req); err != nil {
		return nil, err
	}
	rec := schema.QuotaRecord{User: user, CPU: req.Cpu, Memory: req.Memory, By: caller(ctx).String(), Updated: c.clock.Now().UTC()}
	if req.Gpus != nil {
		n := int(req.GetGpus())
		rec.GPUs = &n
	}
	if req.Jobs != nil {
		n := int(req.GetJobs())
		rec.Jobs = &n
	}
	if err := coord.PutJSON(ctx, c.cli, coord.QuotaKey(user), rec); err != nil {
		return nil, etcdUnavailable("set the quota of user "+user, err)
	}
	c.log.Info("quota set", "user", user, "by", rec.By)
	return c.quotaRow(ctx, user)
}

// checkQuotaLimits refuses negative or non-finite limits.
func checkQuotaLimits(req *api.SetQuotaRequest) error {
	if req.Cpu != nil && (req.GetCpu() < 0 || math.IsNaN(req.GetCpu()) || math.IsInf(req.GetCpu(), 0)) {
		return status.Errorf(codes.InvalidArgument, "--cpu %v: want a number of CPUs of 0 or more", req.GetCpu())
	}
	for _, l := range []struct {
		flag string
		set  bool
		v    int64
	}{{"--memory", req.Memory != nil, req.GetMemory()}, {"--gpus", req.Gpus != nil, int64(req.GetGpus())}, {"--jobs", req.Jobs != nil, int64(req.GetJobs())}} {
		if l.set && l.v < 0 {
			return status.Errorf(codes.InvalidArgument, "%s %d: want 0 or more", l.flag, l.v)
		}
	}
	return nil
}

// quotaRow is user's quota (no limit when the user has none) and use.
func (c *Server) quotaRow(ctx context.Context, user string) (*api.Document, error) {
	q, _, err := coord.ReadQuota(ctx, c.cli, user)
	if err != nil {
		return nil, etcdUnavailable("read the quota of user "+user, err)
	}
	jobs, err := c.readJobs(ctx)
	if err != nil {
		return nil, err
	}
	row := api.QuotaRow{User: user, CPU: q.CPU, Memory: q.Memory, GPUs: q.GPUs, Jobs: q.Jobs}
	for _, s := range jobs {
		if s.Record.Submitter == nil || s.Record.Submitter.Name != user || api.Terminal(s.State.State) || len(s.Record.Placement) == 0 {
			continue
		}
		requests := scheduler.Requests(&s.Record.Spec)
		for w := range s.Record.Placement {
			row.CPUUsed += requests[w].CPU
			row.MemoryUsed += requests[w].Memory
			row.GPUsUsed += requests[w].GPUs
		}
		row.JobsUsed++
	}
	row.CPUUsed = math.Round(row.CPUUsed*1e6) / 1e6 // no float noise of the sum (0.1 + 0.2)
	return document(row)
}
