package controlapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/gtrain/gtrain/api"
	"github.com/gtrain/gtrain/coord"
	"github.com/gtrain/gtrain/coord/schema"
	"github.com/gtrain/gtrain/dataset"
	"github.com/gtrain/gtrain/jobspec"
)

func jobNotFound(name string) error {
	return status.Errorf(codes.NotFound, "job %s not found; see gctl job list", name)
}

func etcdUnavailable(op string, err error) error {
	if s, ok := status.FromError(err); ok && s.Code() == codes.Canceled || errors.Is(err, context.Canceled) {
		return status.Errorf(codes.Canceled, "%s: %v", op, err)
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return status.Errorf(codes.DeadlineExceeded, "%s: %v", op, err)
	}
	return status.Errorf(codes.Unavailable, "%s: etcd: %v", op, err)
}

func document(v any) (*api.Document, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, status.Errorf(codes.Internal, "encode %T: %v", v, err)
	}
	return &api.Document{Json: b}, nil
}

// checkName rejects names that break the rule before they become etcd keys.
func checkName(name string) error {
	if err := jobspec.ValidateName(name); err != nil {
		return status.Error(codes.InvalidArgument, err.Error())
	}
	return nil
}

// SubmitJob validates the spec against the rules and the data and writes
// the job PENDING, refusing a name in use. The cluster's scheduler places
// it (at once when there is room, else when capacity appears).
func (c *Server) SubmitJob(ctx context.Context, req *api.SubmitJobRequest) (*api.SubmitJobResponse, error) {
	spec, err := decodeSpec(req.GetSpecJson())
	if err == nil {
		if err := c.nameFree(ctx, spec.Name); err != nil {
			return nil, err // before the declare runs anything (the transaction checks again)
		}
		err = c.confineSpec(req, spec) // before CheckData reads any file the spec names
	}
	if err == nil {
		err = spec.CheckData(globFiles, shardInfo)
	}
	if err == nil {
		err = c.declareProgram(ctx, req, spec)
	}
	if err == nil {
		err = c.resolveInitFrom(ctx, spec)
	}
	if err != nil {
		return nil, status.Error(codes.InvalidArgument, err.Error())
	}
	now, who := c.clock.Now().UTC(), caller(ctx)
	record := schema.JobRecord{Spec: *spec, Created: now, Submitter: submitter(who)}
	state := schema.StateRecord{State: api.StatePending, Updated: now}
	key := coord.JobKey(spec.Name)
	resp, err := c.cli.Txn(ctx).
		If(clientv3.Compare(clientv3.CreateRevision(key), "=", 0)).
		Then(append([]clientv3.Op{clientv3.OpPut(key, coord.MustJSON(record)), clientv3.OpPut(coord.StateKey(spec.Name), coord.MustJSON(state))},
			packageOps(req, spec)...)...).
		Commit()
	if err != nil {
		return nil, etcdUnavailable("submit job "+spec.Name, err)
	}
	if !resp.Succeeded {
		return nil, nameInUse(spec.Name)
	}
	if err := coord.AppendEvent(ctx, c.cli, spec.Name, "job submitted by "+who.String()+" via "+c.node); err != nil {
		c.log.Warn("cannot record job event", "job", spec.Name, "err", err)
	}
	c.log.Info("job submitted", "job", spec.Name)
	return &api.SubmitJobResponse{Name: spec.Name, Workers: spec.Workers()}, nil
}

// nameFree refuses a name in use before the submit does any work: the
// declare of a program job runs the submitted code.
func (c *Server) nameFree(ctx context.Context, name string) error {
	resp, err := c.cli.Get(ctx, coord.JobKey(name), clientv3.WithCountOnly())
	if err != nil {
		return etcdUnavailable("submit job "+name, err)
	}
	if resp.Count > 0 {
		return nameInUse(name)
	}
	return nil
}

func nameInUse(name string) error {
	return status.Errorf(codes.AlreadyExists,
		"job %s already exists; stop it with `gctl job stop %s --purge` to reuse the name", name, name)
}

// decodeSpec turns the submitted JSON into a valid spec: known fields only,
// defaults applied, absolute paths. SubmitJob then confines the paths and
// checks that they match record shards whose features fit the model.
func decodeSpec(raw []byte) (*jobspec.Spec, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	var spec jobspec.Spec
	if err := dec.Decode(&spec); err != nil {
		return nil, fmt.Errorf("%w: spec_json: %v", jobspec.ErrInvalidSpec, err)
	}
	if dec.More() {
		return nil, fmt.Errorf("%w: spec_json: more than one JSON document", jobspec.ErrInvalidSpec)
	}
	spec.ApplyDefaults()
	if err := spec.Validate(); err != nil {
		return nil, err
	}
	spec.FixGlobalBatch()
	for _, p := range spec.PathFields() {
		if *p.Path != "" && !filepath.IsAbs(*p.Path) {
			return nil, &jobspec.FieldError{Field: p.Field, Msg: fmt.Sprintf(
				"%q is relative; the agent has no spec file to resolve it against: give an absolute path", *p.Path)}
		}
	}
	return &spec, nil
}

// globFiles is dataset.Glob with "no match" as an empty result, so that
// CheckData names the field whose pattern matched nothing.
func globFiles(pattern string) ([]string, error) {
	files, err := dataset.Glob(pattern)
	if errors.Is(err, dataset.ErrNoMatch) {
		return nil, nil
	}
	return files, err
}

// shardInfo is what CheckData needs of a record file: its header's counts
// and label range, and the shard set its name belongs to.
func shardInfo(file string) (jobspec.ShardInfo, error) {
	meta, _, err := dataset.ReadShardMeta(file)
	if err != nil {
		return jobspec.ShardInfo{}, err
	}
	si := jobspec.ShardInfo{Features: meta.Features, Classes: meta.Classes, IDFields: meta.IDFieldNames(), IDMax: meta.IDMax}
	si.Set, si.Of, _ = dataset.ParseShardName(file)
	if l := meta.Labels; l.Known() {
		si.Labels = &jobspec.LabelRange{Min: float64(l.Min), Max: float64(l.Max)}
		if !l.Whole {
			si.Labels.NotWhole = new(float64(l.NotWhole))
		}
	}
	return si, nil
}

// readJob reads everything under one job's prefix; NotFound when the job
// has no record.
func (c *Server) readJob(ctx context.Context, name string) (*jobSnapshot, error) {
	if err := checkName(name); err != nil {
		return nil, err
	}
	resp, err := c.cli.Get(ctx, coord.JobPrefix(name), clientv3.WithPrefix())
	if err != nil {
		return nil, etcdUnavailable("read job "+name, err)
	}
	jobs, err := snapshotJobs(resp.Kvs)
	if err != nil {
		return nil, status.Errorf(codes.Internal, "job %s: %v", name, err)
	}
	snap := jobs[name]
	if snap == nil || snap.Record == nil {
		return nil, jobNotFound(name)
	}
	return snap, nil
}

// readJobs reads every job that has a record.
func (c *Server) readJobs(ctx context.Context) (map[string]*jobSnapshot, error) {
	resp, err := c.cli.Get(ctx, coord.JobsPrefix(), clientv3.WithPrefix())
	if err != nil {
		return nil, etcdUnavailable("list jobs", err)
	}
	jobs, err := snapshotJobs(resp.Kvs)
	if err != nil {
		return nil, status.Errorf(codes.Internal, "list jobs: %v", err)
	}
	for name, s := range jobs {
		if s.Record == nil {
			delete(jobs, name) // leftovers of a job being purged
		}
	}
	return jobs, nil
}

func (c *Server) ListJobs(ctx context.Context, _ *api.ListJobsRequest) (*api.Document, error) {
	jobs, err := c.readJobs(ctx)
	if err != nil {
		return nil, err
	}
	now := c.clock.Now()
	rows := make([]api.JobRow, 0, len(jobs))
	for _, s := range jobs {
		rows = append(rows, jobRow(s, now))
	}
	slices.SortFunc(rows, func(a, b api.JobRow) int { return strings.Compare(a.Name, b.Name) })
	return document(rows)
}

func (c *Server) GetJob(ctx context.Context, req *api.GetJobRequest) (*api.Document, error) {
	snap, err := c.readJob(ctx, req.GetName())
	if err != nil {
		return nil, err
	}
	if err := c.readHistory(ctx, snap); err != nil {
		return nil, err
	}
	down, err := c.nodeDown(ctx)
	if err != nil {
		return nil, err
	}
	return document(jobStatus(snap, down, c.clock.Now()))
}

func (c *Server) ListWorkers(ctx context.Context, req *api.GetJobRequest) (*api.Document, error) {
	snap, err := c.readJob(ctx, req.GetName())
	if err != nil {
		return nil, err
	}
	down, err := c.nodeDown(ctx)
	if err != nil {
		return nil, err
	}
	return document(workerRows(snap, down))
}

// StopJob moves the job to STOPPED; every agent's supervisor then stops its
// children. With purge it waits for them and deletes the job's keys, which
// makes the agents remove the job's directories.
func (c *Server) StopJob(ctx context.Context, req *api.StopJobRequest) (*api.StopJobResponse, error) {
	name := req.GetName()
	snap, err := c.readJob(ctx, name)
	if err != nil {
		return nil, err
	}
	who := caller(ctx)
	if err := mayChangeJob(who, name, snap.Record, "stop"); err != nil {
		return nil, err
	}
	var stopped []string
	for _, w := range snap.Record.Spec.Workers() {
		if rec, ok := snap.Workers[w]; ok && rec.State.Active() {
			stopped = append(stopped, w)
		}
	}
	changed, err := coord.SetJobState(ctx, c.cli, name, api.StateStopped, "stopped by "+who.String())
	if err != nil {
		return nil, etcdUnavailable("stop job "+name, err)
	}
	if changed {
		if err := coord.AppendEvent(ctx, c.cli, name, "job stopped by "+who.String()+" via "+c.node); err != nil {
			c.log.Warn("cannot record job event", "job", name, "err", err)
		}
	}
	if req.GetPurge() {
		if err := c.purge(ctx, name); err != nil {
			return nil, err
		}
		return &api.StopJobResponse{State: string(api.StateStopped), Stopped: stopped}, nil
	}
	st, err := coord.JobState(ctx, c.cli, name)
	if err != nil {
		return nil, etcdUnavailable("stop job "+name, err)
	}
	return &api.StopJobResponse{State: string(st.State), Stopped: stopped}, nil
}

// purge waits until no worker of the job is alive (on a registered node),
// then deletes the job's keys and tasks.
func (c *Server) purge(ctx context.Context, name string) error {
	if err := c.waitWorkersGone(ctx, name, fmt.Sprintf("gctl job stop %s --purge", name)); err != nil {
		return err
	}
	_, err := c.cli.Txn(ctx).Then(coord.PurgeJobOps(name)...).Commit()
	if err != nil {
		return etcdUnavailable("purge job "+name, err)
	}
	c.log.Info("job purged", "job", name)
	return nil
}

// waitWorkersGone waits, up to purgeTimeout, until no worker of the ended
// job is alive (on a registered node). Its errors say to retry the command
// retry.
func (c *Server) waitWorkersGone(ctx context.Context, name, retry string) error {
	wctx, cancel := context.WithTimeout(ctx, c.purgeTimeout)
	defer cancel()
	tick := c.clock.NewTicker(c.purgePoll)
	defer tick.Stop()
	for {
		alive, err := c.aliveWorkers(wctx, name)
		switch {
		case err != nil && ctx.Err() != nil:
			return status.FromContextError(ctx.Err()).Err()
		case err != nil && wctx.Err() != nil:
			return status.Errorf(codes.FailedPrecondition, "job %s: cannot check its workers within %s: %v; retry `%s`",
				name, c.purgeTimeout, err, retry)
		case err != nil:
			return etcdUnavailable("check the workers of job "+name, err)
		}
		if len(alive) == 0 {
			return nil
		}
		select {
		case <-tick.C():
		case <-wctx.Done():
			if ctx.Err() != nil {
				return status.FromContextError(ctx.Err()).Err()
			}
			return status.Errorf(codes.FailedPrecondition,
				"job %s has ended but its workers did not exit within %s: %s; retry `%s` later",
				name, c.purgeTimeout, strings.Join(alive, ", "), retry)
		}
	}
}

// aliveWorkers names the workers whose record says they run on a node that
// is still registered and not down ("trainer-0 on n2").
func (c *Server) aliveWorkers(ctx context.Context, name string) ([]string, error) {
	workers, err := coord.ListJSON[schema.WorkerRecord](ctx, c.cli, coord.WorkerPrefix(name))
	if err != nil {
		return nil, err
	}
	nodes, err := coord.ListJSON[schema.NodeRecord](ctx, c.cli, coord.NodePrefix())
	if err != nil {
		return nil, err
	}
	registered := map[string]bool{}
	for _, n := range nodes {
		registered[n.Name] = !c.peers.IsDown(n.Name)
	}
	var alive []string
	for _, w := range workers {
		if w.State.Active() && registered[w.Node] {
			alive = append(alive, fmt.Sprintf("%s (%s on %s)", w.Name, w.State, w.Node))
		}
	}
	return alive, nil
}
