package master

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"time"

	"github.com/gtrain/gtrain/coord"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// trainerResync is the pause before re-reading the trainers after a watch broke.
const trainerResync = time.Second

// watchTrainers tells the driver when a trainer's ID key vanishes with its lease.
func watchTrainers(ctx context.Context, cli *clientv3.Client, job string, driver *Driver, log *slog.Logger) {
	lost := func(id int, worker string) {
		if driver.Done() {
			return // trainers leave at the end
		}
		log.Warn("trainer gone", "id", id, "worker", worker)
		if err := driver.TrainerLost(ctx, id); err != nil {
			log.Error("release trainer", "id", id, "err", err)
		}
	}
	for ctx.Err() == nil {
		known, rev, err := readTrainers(ctx, cli, job)
		if err == nil {
			followTrainers(ctx, cli, job, known, rev, lost)
			return
		}
		log.Warn("read trainers; retrying", "err", err)
		select {
		case <-ctx.Done():
		case <-time.After(trainerResync):
		}
	}
}

// followTrainers calls lost for every trainer of known (read at rev) whose
// key is deleted, until ctx ends. A watch that breaks (its revision
// compacted away after a long cut from etcd, a closed stream) is not the
// end: the trainers are read again, those gone meanwhile reported, and the
// watch resumes from there.
func followTrainers(ctx context.Context, cli *clientv3.Client, job string, known map[int]string, rev int64, lost func(id int, worker string)) {
	for {
		watchTrainerKeys(ctx, cli, job, known, rev+1, lost)
		select {
		case <-ctx.Done():
			return
		case <-time.After(trainerResync):
		}
		cur, curRev, err := readTrainers(ctx, cli, job)
		if err != nil {
			continue // etcd away: read again after the pause, then watch
		}
		for id, worker := range known {
			if _, ok := cur[id]; !ok {
				lost(id, worker)
			}
		}
		known, rev = cur, curRev
	}
}

// readTrainers returns the registered trainers (ID -> worker) and the revision read.
func readTrainers(ctx context.Context, cli *clientv3.Client, job string) (map[int]string, int64, error) {
	resp, err := cli.Get(ctx, coord.TrainerPrefix(job), clientv3.WithPrefix())
	if err != nil {
		return nil, 0, fmt.Errorf("read trainers of %s: %w", job, err)
	}
	out := make(map[int]string, len(resp.Kvs))
	for _, kv := range resp.Kvs {
		if id, ok := coord.ParseTrainerKey(job, string(kv.Key)); ok {
			var rec coord.TrainerRecord
			_ = json.Unmarshal(kv.Value, &rec)
			out[id] = rec.Worker
		}
	}
	return out, resp.Header.Revision, nil
}

// watchTrainerKeys follows the trainer keys from rev, keeping known up to
// date, until the watch breaks or ctx ends.
func watchTrainerKeys(ctx context.Context, cli *clientv3.Client, job string, known map[int]string, rev int64, lost func(int, string)) {
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
			if e.Type != clientv3.EventTypeDelete {
				var rec coord.TrainerRecord
				_ = json.Unmarshal(e.Kv.Value, &rec)
				known[id] = rec.Worker
				continue
			}
			delete(known, id)
			var rec coord.TrainerRecord
			if e.PrevKv != nil {
				_ = json.Unmarshal(e.PrevKv.Value, &rec)
			}
			lost(id, rec.Worker)
		}
	}
}
