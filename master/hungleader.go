package master

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/gtrain/gtrain/api"
	"github.com/gtrain/gtrain/coord"
	"github.com/gtrain/gtrain/coord/schema"
	"github.com/gtrain/gtrain/jobspec"
	"github.com/gtrain/gtrain/pserver/client"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// Health probes of the pservers: at most every maxProbeEvery (more often
// for a short hung_after), each call bounded by at most maxProbeTimeout.
const (
	maxProbeEvery   = 5 * time.Second
	maxProbeTimeout = 2 * time.Second
)

// hungLeader is the IO around hungWatch (sync jobs): it probes the
// pservers, reads the workers' records, and keeps the job's hung records
// (coord.HungKey) and events in step with what hungWatch finds. The agents
// that run the hung workers kill them so that they are restarted.
type hungLeader struct {
	cli    *clientv3.Client
	lead   *coord.Leadership
	job    string
	spec   *jobspec.Spec
	driver *Driver
	ps     *client.Dynamic
	log    *slog.Logger

	mu      sync.Mutex // watch, between the prober and the loop
	watch   *hungWatch
	written map[string]schema.HungRecord // worker -> the record this master wrote
	trainer map[int]string               // trainer ID -> worker, as last registered
}

func newHungLeader(l *leader) *hungLeader {
	after, err := l.job.spec.Restarts.HungAfterDuration()
	if err != nil { // a spec stored before hung_after existed
		after, _ = jobspec.RestartsSpec{HungAfter: jobspec.DefaultHungAfter}.HungAfterDuration()
	}
	return &hungLeader{cli: l.cli, lead: l.lead, job: l.cfg.Job, spec: l.job.spec, driver: l.driver, ps: l.ps,
		log: l.cfg.Log, watch: newHungWatch(after), trainer: map[int]string{}}
}

// loadWritten reads the hung records a predecessor left, so that check
// removes those of workers that are not hung (any more).
func (h *hungLeader) loadWritten(ctx context.Context) error {
	resp, err := h.cli.Get(ctx, coord.HungPrefix(h.job), clientv3.WithPrefix())
	if err != nil {
		return fmt.Errorf("read hung records: %w", err)
	}
	h.written = map[string]schema.HungRecord{}
	for _, kv := range resp.Kvs {
		var rec schema.HungRecord
		if w, ok := coord.ParseHungKey(h.job, string(kv.Key)); ok && json.Unmarshal(kv.Value, &rec) == nil {
			h.written[w] = rec
		}
	}
	return nil
}

// probe asks the pservers for their health until ctx ends.
func (h *hungLeader) probe(ctx context.Context) {
	every := min(maxProbeEvery, h.watch.after/2)
	timeout := min(maxProbeTimeout, every)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		sent := time.Now()
		health := h.ps.Client().Probe(ctx, timeout)
		h.mu.Lock()
		for i, hl := range health {
			h.watch.probed(i, hl, sent)
		}
		h.mu.Unlock()
	}
}

// check finds the hung workers now and writes, or removes, their records.
func (h *hungLeader) check(ctx context.Context) error {
	if h.written == nil {
		if err := h.loadWritten(ctx); err != nil {
			return err
		}
	}
	pids, recs, err := h.readWorkers(ctx)
	if err != nil {
		return err
	}
	step, missing, stalled := h.driver.Stalled(h.watch.after)
	st := stepStall{step: step, missing: missing, stalled: stalled, trainers: h.spec.Trainers}
	now := time.Now()
	h.mu.Lock()
	h.watch.observe(pids, now)
	found := h.watch.find(now, st, h.ps.Servers(), h.trainerWorker) // the layout in use: re-sharding moves it
	h.mu.Unlock()
	for w, f := range found {
		if old, ok := h.written[w]; ok && old.PID == f.PID {
			continue
		}
		rec := schema.HungRecord{Worker: w, PID: f.PID, Host: recs[w].Host, Since: f.Since.UTC(), Reason: f.Reason}
		if err := h.lead.Commit(ctx, clientv3.OpPut(coord.HungKey(h.job, w), coord.MustJSON(rec))); err != nil {
			return fmt.Errorf("write hung record of %s: %w", w, err)
		}
		h.written[w] = rec
		what := f.Reason + ": hung; its agent restarts it"
		h.log.Warn(what, "worker", w, "pid", f.PID)
		_ = coord.AppendEvent(ctx, h.cli, h.job, what)
	}
	for w := range h.written {
		if _, ok := found[w]; ok {
			continue
		}
		if err := h.lead.Commit(ctx, clientv3.OpDelete(coord.HungKey(h.job, w))); err != nil {
			return fmt.Errorf("remove hung record of %s: %w", w, err)
		}
		delete(h.written, w)
		h.log.Info("worker progresses again; hung record removed", "worker", w)
	}
	return nil
}

// readWorkers returns the PIDs of the job's running workers and their
// records, and notes which worker holds each trainer ID.
func (h *hungLeader) readWorkers(ctx context.Context) (map[string]int, map[string]schema.WorkerRecord, error) {
	resp, err := h.cli.Get(ctx, coord.WorkerPrefix(h.job), clientv3.WithPrefix())
	if err != nil {
		return nil, nil, fmt.Errorf("read workers: %w", err)
	}
	pids, recs := map[string]int{}, map[string]schema.WorkerRecord{}
	for _, kv := range resp.Kvs {
		var w schema.WorkerRecord
		if json.Unmarshal(kv.Value, &w) != nil || w.State != api.WorkerRunning || w.PID <= 0 {
			continue
		}
		pids[w.Name], recs[w.Name] = w.PID, w
	}
	tresp, err := h.cli.Get(ctx, coord.TrainerPrefix(h.job), clientv3.WithPrefix())
	if err != nil {
		return nil, nil, fmt.Errorf("read trainers: %w", err)
	}
	for _, kv := range tresp.Kvs {
		var t schema.TrainerRecord
		if json.Unmarshal(kv.Value, &t) == nil {
			h.trainer[t.ID] = t.Worker
		}
	}
	return pids, recs, nil
}

// trainerWorker names trainer ID id's worker: the one that last held it,
// else the one whose name the registry prefers for it.
func (h *hungLeader) trainerWorker(id int) string {
	if w, ok := h.trainer[id]; ok {
		return w
	}
	return jobspec.TrainerName(id)
}
