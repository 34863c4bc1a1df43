package master

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"time"

	"github.com/gtrain/gtrain/coord"
	"github.com/gtrain/gtrain/coord/schema"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// trainerResync is the pause before listing the trainers again after their
// watch broke (etcd unreachable, or the watched revision compacted).
const trainerResync = time.Second

// trainerHooks is what the trainer watch tells: every listing of the live
// trainers, a trainer (re)registered, a trainer gone.
type trainerHooks struct {
	listed func(ids []int) error
	up     func(id int)
	lost   func(id int, worker string)
}

// driverHooks feeds the driver the trainers' liveness: an ID key under the
// trainer's lease exists while the trainer lives.
func driverHooks(ctx context.Context, driver *Driver, log *slog.Logger) trainerHooks {
	return trainerHooks{
		listed: func(ids []int) error { return driver.TrainersLive(ctx, ids) },
		up:     driver.TrainerUp,
		lost: func(id int, worker string) {
			if driver.Done() {
				return // trainers leave at the end
			}
			log.Warn("trainer gone", "id", id, "worker", worker)
			if err := driver.TrainerLost(ctx, id); err != nil {
				log.Error("release trainer", "id", id, "err", err)
			}
		},
	}
}

// startTrainerWatch lists the live trainers, then follows them in the
// background. It runs before the master serves: no trainer can take a task
// from this master before the listing, which would otherwise give back a
// task a trainer registered just after it holds.
func startTrainerWatch(ctx context.Context, cli *clientv3.Client, job string, driver *Driver, log *slog.Logger) error {
	hooks := driverHooks(ctx, driver, log)
	known, rev, err := listTrainers(ctx, cli, job, hooks)
	if err != nil {
		return fmt.Errorf("master: list trainers: %w", err)
	}
	go followTrainers(ctx, cli, job, known, rev, hooks)
	return nil
}

// watchTrainers is startTrainerWatch without the first listing's error:
// it lists (retrying while etcd is away), then follows.
func watchTrainers(ctx context.Context, cli *clientv3.Client, job string, driver *Driver, log *slog.Logger) {
	hooks := driverHooks(ctx, driver, log)
	for ctx.Err() == nil {
		known, rev, err := listTrainers(ctx, cli, job, hooks)
		if err == nil {
			followTrainers(ctx, cli, job, known, rev, hooks)
			return
		}
		log.Warn("list trainers; retrying", "err", err)
		select {
		case <-ctx.Done():
		case <-time.After(trainerResync):
		}
	}
}

// followTrainers follows the trainers of known (listed at rev) until ctx
// ends. A watch that breaks (its revision compacted away after a long cut
// from etcd, a closed stream) is not the end: the trainers are listed
// again, those gone meanwhile reported lost, and the watch resumes from
// there. While etcd cannot be reached the last known set stands: an outage
// takes no task from a trainer.
func followTrainers(ctx context.Context, cli *clientv3.Client, job string, known map[int]string, rev int64, hooks trainerHooks) {
	for {
		watchTrainerKeys(ctx, cli, job, known, rev+1, hooks)
		select {
		case <-ctx.Done():
			return
		case <-time.After(trainerResync):
		}
		cur, curRev, err := listTrainers(ctx, cli, job, hooks)
		if err != nil {
			continue // etcd away: list again after the pause, then watch
		}
		for id, worker := range known {
			if _, ok := cur[id]; !ok && hooks.lost != nil {
				hooks.lost(id, worker)
			}
		}
		known, rev = cur, curRev
	}
}

// listTrainers returns the registered trainers (ID -> worker) and the
// revision read, and tells hooks.listed.
func listTrainers(ctx context.Context, cli *clientv3.Client, job string, hooks trainerHooks) (map[int]string, int64, error) {
	resp, err := cli.Get(ctx, coord.TrainerPrefix(job), clientv3.WithPrefix())
	if err != nil {
		return nil, 0, fmt.Errorf("read trainers of %s: %w", job, err)
	}
	out := make(map[int]string, len(resp.Kvs))
	for _, kv := range resp.Kvs {
		if id, ok := coord.ParseTrainerKey(job, string(kv.Key)); ok {
			var rec schema.TrainerRecord
			_ = json.Unmarshal(kv.Value, &rec)
			out[id] = rec.Worker
		}
	}
	if hooks.listed != nil {
		if err := hooks.listed(slices.Sorted(maps.Keys(out))); err != nil {
			return nil, 0, err
		}
	}
	return out, resp.Header.Revision, nil
}

// watchTrainerKeys follows the trainer keys from rev, keeping known up to
// date, until the watch breaks or ctx ends.
func watchTrainerKeys(ctx context.Context, cli *clientv3.Client, job string, known map[int]string, rev int64, hooks trainerHooks) {
	wctx, cancel := context.WithCancel(clientv3.WithRequireLeader(ctx))
	defer cancel()
	for resp := range cli.Watch(wctx, coord.TrainerPrefix(job), clientv3.WithPrefix(), clientv3.WithPrevKV(), clientv3.WithRev(rev)) {
		if resp.Err() != nil {
			return
		}
		for _, e := range resp.Events {
			id, ok := coord.ParseTrainerKey(job, string(e.Kv.Key))
			if !ok {
				continue
			}
			var rec schema.TrainerRecord
			if e.Type != clientv3.EventTypeDelete {
				_ = json.Unmarshal(e.Kv.Value, &rec)
				known[id] = rec.Worker
				if hooks.up != nil {
					hooks.up(id)
				}
				continue
			}
			delete(known, id)
			if e.PrevKv != nil {
				_ = json.Unmarshal(e.PrevKv.Value, &rec)
			}
			if hooks.lost != nil {
				hooks.lost(id, rec.Worker)
			}
		}
	}
}
