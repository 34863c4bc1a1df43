package scheduler

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/gtrain/gtrain/internal/clock"
	"github.com/gtrain/gtrain/internal/testing/etcdtest"
)

func TestRevisionLogKeepsRetainOfHistory(t *testing.T) {
	l := revisionLog{retain: 10 * time.Minute}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, s := range []struct {
		after time.Duration
		rev   int64
		want  int64
	}{
		{0, 100, 0},
		{5 * time.Minute, 200, 0},
		{10 * time.Minute, 300, 100}, // 100 is 10 minutes old
		{15 * time.Minute, 400, 200},
		{16 * time.Minute, 410, 0}, // nothing newer is 10 minutes old yet
		{20 * time.Minute, 500, 300},
		{20 * time.Minute, 500, 0}, // never the same twice
	} {
		if got := l.add(t0.Add(s.after), s.rev); got != s.want {
			t.Fatalf("at +%v (revision %d): compact to %d, want %d", s.after, s.rev, got, s.want)
		}
	}
}

// TestSchedulerCompactsEtcd: the scheduler's compactor compacts a real etcd
// (a member of this test's own: compaction is cluster-wide) to a revision
// older than its retention, and a watch from before it gets ErrCompacted
// (the case every watcher re-reads on).
func TestSchedulerCompactsEtcd(t *testing.T) {
	cli := etcdtest.Dial(t, etcdtest.Start(t).Endpoint)
	put := func(i int) int64 {
		resp, err := cli.Put(t.Context(), fmt.Sprintf("/compact-test/%d", i%10), "v")
		if err != nil {
			t.Fatal(err)
		}
		return resp.Header.Revision
	}
	first := put(0)
	s := &Scheduler{cli: cli, clock: clock.System{}, log: slog.New(slog.DiscardHandler),
		compactEvery: 20 * time.Millisecond, compactRetain: 100 * time.Millisecond}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	go s.compact(ctx)
	deadline := time.Now().Add(10 * time.Second)
	for i := 1; ; i++ {
		put(i)
		_, err := cli.Get(t.Context(), "/compact-test/0", clientv3.WithRev(first))
		if errors.Is(err, rpctypes.ErrCompacted) {
			break
		}
		if err != nil || time.Now().After(deadline) {
			t.Fatalf("revision %d still readable after 10 s of compaction (%v)", first, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	wch := cli.Watch(t.Context(), "/compact-test/", clientv3.WithPrefix(), clientv3.WithRev(first))
	resp := <-wch
	if !errors.Is(resp.Err(), rpctypes.ErrCompacted) || resp.CompactRevision <= first {
		t.Fatalf("watch from compacted revision %d: err %v, compact revision %d", first, resp.Err(), resp.CompactRevision)
	}
	// Only what is older than the retention goes: the newest revision stays readable.
	newest := put(0)
	if _, err := cli.Get(t.Context(), "/compact-test/0", clientv3.WithRev(newest)); err != nil {
		t.Fatalf("newest revision %d: %v", newest, err)
	}
}
