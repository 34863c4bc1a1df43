package master

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/gtrain/gtrain/coord"
	"github.com/gtrain/gtrain/coord/schema"
	"github.com/gtrain/gtrain/internal/testing/etcdtest"
)

// TestFollowTrainersSurvivesCompaction: a trainer that left while the
// master's watch was cut off, and whose deletion etcd has compacted away,
// is still reported (the watch breaks with ErrCompacted, the trainers are
// read again); the watch then goes on and reports a live deletion.
func TestFollowTrainersSurvivesCompaction(t *testing.T) {
	cli := dialTest(t, etcdtest.Start(t).Endpoint) // compaction is cluster-wide: an etcd of its own
	const job = "compacted"
	for id, worker := range map[int]string{0: "trainer-0", 1: "trainer-1"} {
		if err := coord.PutJSON(t.Context(), cli, coord.TrainerKey(job, id), schema.TrainerRecord{ID: id, Worker: worker}); err != nil {
			t.Fatal(err)
		}
	}
	known, rev, err := listTrainers(t.Context(), cli, job, trainerHooks{})
	if err != nil || len(known) != 2 {
		t.Fatalf("read trainers: %v, %v", known, err)
	}
	if _, err := cli.Delete(t.Context(), coord.TrainerKey(job, 1)); err != nil {
		t.Fatal(err)
	}
	resp, err := cli.Put(t.Context(), "/unrelated", "x")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cli.Compact(t.Context(), resp.Header.Revision); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var lost []string
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	go followTrainers(ctx, cli, job, known, rev, trainerHooks{lost: func(id int, worker string) {
		mu.Lock()
		defer mu.Unlock()
		lost = append(lost, worker)
	}})
	waitLost := func(want int) []string {
		deadline := time.Now().Add(10 * time.Second)
		for {
			mu.Lock()
			got := append([]string(nil), lost...)
			mu.Unlock()
			if len(got) >= want || time.Now().After(deadline) {
				return got
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	if got := waitLost(1); len(got) != 1 || got[0] != "trainer-1" {
		t.Fatalf("after a compacted watch, lost %v; want [trainer-1]", got)
	}
	time.Sleep(2 * trainerResync) // watching again, from the re-read
	if _, err := cli.Delete(t.Context(), coord.TrainerKey(job, 0)); err != nil {
		t.Fatal(err)
	}
	if got := waitLost(2); len(got) != 2 || got[1] != "trainer-0" {
		t.Fatalf("a live deletion after the resync: lost %v; want [trainer-1 trainer-0]", got)
	}
}
