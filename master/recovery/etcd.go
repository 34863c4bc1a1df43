package recovery

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"

	"github.com/gtrain/gtrain/checkpoint"
	"github.com/gtrain/gtrain/coord"
	"github.com/gtrain/gtrain/coord/schema"
	"github.com/gtrain/gtrain/jobspec"
	"github.com/gtrain/gtrain/pserver/client"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// EtcdConfig is where a master's recovery keeps its records.
type EtcdConfig struct {
	Cli    *clientv3.Client
	Lead   *coord.Leadership // fences every write
	Job    string
	JobRev int64  // the create revision of the job record: the checkpoints' identity
	Dir    string // the master's checkpoint directory (jobdir.MasterCheckpoints)
	Keep   int    // global checkpoints kept (the spec's checkpoint.keep)
	// Paths reaches Dir's files: the job's confine.Roots (nil: the plain
	// file system).
	Paths checkpoint.Paths
	Log   *slog.Logger
}

// Open returns the recovery of a sync job on etcd and the pservers of ps,
// with the master's own checkpoints opened.
func Open(ctx context.Context, cfg EtcdConfig, driver Driver, ps *client.Dynamic) (*Recovery, error) {
	rec := checkpoint.NewEtcdRecorder(cfg.Cli, func(i int) string { return coord.MasterCheckpointRecordKey(cfg.Job, i) })
	rec.Guard = []clientv3.Cmp{cfg.Lead.Guard()}
	states, err := checkpoint.NewStore(checkpoint.Config{
		Identity: checkpoint.Identity{Job: cfg.Job, Rev: cfg.JobRev},
		Dir:      cfg.Dir, Paths: cfg.Paths, Keep: cfg.Keep, Owner: jobspec.MasterName,
		// A rollback loads only a state whose sha256 its mark records.
		StepRecord: coord.CheckpointMarkRecords(cfg.Cli, cfg.Job, coord.MasterMark),
		// A pserver whose writes fail holds back the global checkpoint: keep its steps' files too.
		KeepSteps: func(ctx context.Context) ([]int64, error) { return coord.KeptGlobalSteps(ctx, cfg.Cli, cfg.Job) },
	}, rec, cfg.Log)
	if err != nil {
		return nil, err
	}
	if _, _, err := states.Load(ctx); err != nil && !errors.Is(err, checkpoint.ErrNoCheckpoint) {
		cfg.Log.Warn("master checkpoints", "err", err)
	}
	records := &etcdRecords{cli: cfg.Cli, lead: cfg.Lead, job: cfg.Job}
	return New(Ports{Driver: driver, Checkpoints: records, States: states, Layouts: records, Events: records,
		Pservers: &etcdPservers{cli: cfg.Cli, lead: cfg.Lead, job: cfg.Job, ps: ps}}, cfg.Keep, cfg.Log), nil
}

// etcdRecords is the CheckpointStore, LayoutStore and Events of a job on
// etcd, every write fenced on the leadership.
type etcdRecords struct {
	cli  *clientv3.Client
	lead *coord.Leadership
	job  string
}

func (e *etcdRecords) Global(ctx context.Context) (schema.GlobalCheckpoint, int64, error) {
	var g schema.GlobalCheckpoint
	rev, err := coord.GetJSON(ctx, e.cli, coord.GlobalCheckpointKey(e.job), &g)
	if errors.Is(err, coord.ErrNotFound) {
		return schema.GlobalCheckpoint{}, 0, nil
	}
	return g, rev, err
}

func (e *etcdRecords) GlobalChanged(ctx context.Context, rev int64) <-chan struct{} {
	return signal(e.cli.Watch(ctx, coord.GlobalCheckpointKey(e.job), clientv3.WithRev(rev)))
}

func (e *etcdRecords) Marks(ctx context.Context, step int64) ([]string, error) {
	resp, err := e.cli.Get(ctx, coord.CheckpointMarkStepPrefix(e.job, step), clientv3.WithPrefix(), clientv3.WithKeysOnly())
	if err != nil {
		return nil, err
	}
	var who []string
	for _, kv := range resp.Kvs {
		if _, w, ok := coord.ParseCheckpointMarkKey(e.job, string(kv.Key)); ok {
			who = append(who, w)
		}
	}
	return who, nil
}

func (e *etcdRecords) WatchMarks(ctx context.Context, marked func(step int64)) error {
	for resp := range e.cli.Watch(ctx, coord.CheckpointMarkPrefix(e.job), clientv3.WithPrefix()) {
		if err := resp.Err(); err != nil {
			return fmt.Errorf("watch checkpoint marks: %w", err)
		}
		for _, ev := range resp.Events {
			if ev.Type != clientv3.EventTypePut {
				continue
			}
			if step, _, ok := coord.ParseCheckpointMarkKey(e.job, string(ev.Kv.Key)); ok {
				marked(step)
			}
		}
	}
	return nil
}

func (e *etcdRecords) MarkMaster(ctx context.Context, rec checkpoint.Record) error {
	return e.lead.Commit(ctx, coord.PutCheckpointMarkOp(coord.CheckpointMarkKey(e.job, rec.Step, coord.MasterMark), schema.CheckpointMark{File: rec.File, SHA256: rec.SHA256}))
}

func (e *etcdRecords) Declare(ctx context.Context, g schema.GlobalCheckpoint) error {
	return e.lead.Commit(ctx, clientv3.OpPut(coord.GlobalCheckpointKey(e.job), coord.MustJSON(g)),
		coord.DeleteMarksBefore(e.job, g.Steps[0]))
}

func (e *etcdRecords) RollBack(ctx context.Context, g schema.GlobalCheckpoint) error {
	return e.lead.Commit(ctx, clientv3.OpPut(coord.GlobalCheckpointKey(e.job), coord.MustJSON(g)),
		coord.DeleteMarksFrom(e.job, g.Step+1))
}

func (e *etcdRecords) Reshard(ctx context.Context) (schema.ReshardRequest, schema.LayoutRecord, error) {
	return coord.GetReshard(ctx, e.cli, e.job)
}

func (e *etcdRecords) ReshardChanged(ctx context.Context) <-chan struct{} {
	return signal(e.cli.Watch(ctx, coord.ReshardRequestKey(e.job)))
}

func (e *etcdRecords) Layout(ctx context.Context) (schema.LayoutRecord, error) {
	return coord.GetLayout(ctx, e.cli, e.job)
}

func (e *etcdRecords) Commit(ctx context.Context, next schema.LayoutRecord, g schema.GlobalCheckpoint) error {
	return coord.CommitLayout(ctx, e.cli, e.lead.Guard(), e.job, next, g)
}

func (e *etcdRecords) Finish(ctx context.Context, l schema.LayoutRecord, what string) error {
	return e.lead.CommitWithEvents(ctx, e.job, []string{what}, coord.PutLayoutOp(e.job, l))
}

func (e *etcdRecords) Event(ctx context.Context, what string) error {
	return coord.AppendEvent(ctx, e.cli, e.job, what)
}

// signal fires at a watch's first response and is closed when the watch
// ends (its context does).
func signal(w clientv3.WatchChan) <-chan struct{} {
	out := make(chan struct{}, 1)
	go func() {
		defer close(out)
		if _, ok := <-w; ok {
			out <- struct{}{}
		}
	}()
	return out
}

// etcdPservers is the PserverProber of a job: the pservers' gRPC client of
// the layout in use, their registrations in etcd.
type etcdPservers struct {
	cli  *clientv3.Client
	lead *coord.Leadership // its term fences the pservers' restores
	job  string
	ps   *client.Dynamic
}

func (p *etcdPservers) Servers() int                      { return p.ps.Servers() }
func (p *etcdPservers) Generation() int64                 { return p.ps.Generation() }
func (p *etcdPservers) Refresh(ctx context.Context) error { return p.ps.Refresh(ctx) }

func (p *etcdPservers) Steps(ctx context.Context) ([]int64, []int64, error) {
	return p.ps.Client().Steps(ctx)
}

func (p *etcdPservers) Restore(ctx context.Context, step, epoch int64) error {
	return p.ps.Client().Restore(ctx, step, epoch, p.lead.Rev())
}

func (p *etcdPservers) Registrations(ctx context.Context) ([]Registration, int64, error) {
	resp, err := p.cli.Get(ctx, coord.PserverPrefix(p.job), clientv3.WithPrefix())
	if err != nil {
		return nil, 0, err
	}
	var regs []Registration
	for _, kv := range resp.Kvs {
		var rec schema.PserverRecord
		if json.Unmarshal(kv.Value, &rec) == nil {
			regs = append(regs, Registration{PserverRecord: rec, Lease: kv.Lease})
		}
	}
	return regs, resp.Header.Revision + 1, nil
}

func (p *etcdPservers) WatchRegistrations(ctx context.Context, rev int64, registered func(Registration) error) error {
	for resp := range p.cli.Watch(ctx, coord.PserverPrefix(p.job), clientv3.WithPrefix(), clientv3.WithRev(rev)) {
		if err := resp.Err(); err != nil {
			return fmt.Errorf("watch pservers: %w", err)
		}
		for _, ev := range resp.Events {
			var rec schema.PserverRecord
			if ev.Type != clientv3.EventTypePut || json.Unmarshal(ev.Kv.Value, &rec) != nil {
				continue
			}
			if err := registered(Registration{PserverRecord: rec, Lease: ev.Kv.Lease}); err != nil {
				return err
			}
		}
	}
	return nil
}
