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

// relistAfter is the pause before listing the trainers again after their
// watch broke (etcd unreachable, or the watched revision compacted).
const relistAfter = time.Second

// startTrainerWatch lists the live trainers, then follows them in the
// background (see watchTrainers). It runs before the master serves: no
// trainer can take a task from this master before the listing, which would
// otherwise give back a task a trainer registered just after it holds.
func startTrainerWatch(ctx context.Context, cli *clientv3.Client, job string, driver *Driver, log *slog.Logger) error {
	rev, err := listTrainers(ctx, cli, job, driver)
	if err != nil {
		return fmt.Errorf("master: list trainers: %w", err)
	}
	go watchTrainersFrom(ctx, cli, job, driver, log, rev)
	return nil
}

// watchTrainers feeds the driver the trainers' liveness: an ID key under the
// trainer's lease exists while the trainer lives. It lists the keys (the
// tasks of a trainer not listed go back), then follows their puts (alive)
// and deletes (gone: its tasks go back at once), listing again whenever the
// watch breaks. While etcd cannot be reached the last known set stands: an
// outage of etcd takes no task from a trainer.
func watchTrainers(ctx context.Context, cli *clientv3.Client, job string, driver *Driver, log *slog.Logger) {
	watchTrainersFrom(ctx, cli, job, driver, log, 0)
}

// watchTrainersFrom is watchTrainers after a listing at rev (0: none yet).
func watchTrainersFrom(ctx context.Context, cli *clientv3.Client, job string, driver *Driver, log *slog.Logger, rev int64) {
	for ctx.Err() == nil {
		var err error
		if rev == 0 {
			rev, err = listTrainers(ctx, cli, job, driver)
		}
		if err == nil {
			followTrainers(ctx, cli, job, rev, driver, log)
		} else if ctx.Err() == nil {
			log.Warn("list trainers", "err", err)
		}
		rev = 0
		select {
		case <-ctx.Done():
		case <-time.After(relistAfter):
		}
	}
}

// listTrainers gives the driver the trainers alive now and returns the
// revision of that listing.
func listTrainers(ctx context.Context, cli *clientv3.Client, job string, driver *Driver) (int64, error) {
	resp, err := cli.Get(ctx, coord.TrainerPrefix(job), clientv3.WithPrefix(), clientv3.WithKeysOnly())
	if err != nil {
		return 0, err
	}
	ids := make([]int, 0, len(resp.Kvs))
	for _, kv := range resp.Kvs {
		if id, ok := coord.ParseTrainerKey(job, string(kv.Key)); ok {
			ids = append(ids, id)
		}
	}
	if err := driver.TrainersLive(ctx, ids); err != nil {
		return 0, err
	}
	return resp.Header.Revision, nil
}

// followTrainers applies the trainer key events after rev until the watch
// ends.
func followTrainers(ctx context.Context, cli *clientv3.Client, job string, rev int64, driver *Driver, log *slog.Logger) {
	wctx, cancel := context.WithCancel(clientv3.WithRequireLeader(ctx))
	defer cancel()
	for ev := range cli.Watch(wctx, coord.TrainerPrefix(job), clientv3.WithPrefix(), clientv3.WithPrevKV(), clientv3.WithRev(rev+1)) {
		if ev.Err() != nil {
			log.Warn("trainer watch broke; listing again", "err", ev.Err())
			return
		}
		for _, e := range ev.Events {
			id, ok := coord.ParseTrainerKey(job, string(e.Kv.Key))
			if !ok {
				continue
			}
			if e.Type == clientv3.EventTypePut {
				driver.TrainerUp(id)
				continue
			}
			var rec coord.TrainerRecord
			if e.PrevKv != nil {
				_ = json.Unmarshal(e.PrevKv.Value, &rec)
			}
			if driver.Done() {
				continue // trainers leave at the end
			}
			log.Warn("trainer gone", "id", id, "worker", rec.Worker)
			if err := driver.TrainerLost(ctx, id); err != nil {
				log.Error("release trainer", "id", id, "err", err)
			}
		}
	}
}
