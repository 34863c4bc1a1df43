package daemon

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/gtrain/gtrain/api"
	"github.com/gtrain/gtrain/coord"
	"github.com/gtrain/gtrain/coord/schema"
	"github.com/gtrain/gtrain/daemon/scheduler"
)

// A started sync job's workers stay on a draining node, saying why, until
// a global checkpoint completes after the drain began; then they move. The
// test writes the master's meta and the checkpoint record itself, as the
// job's master would (the test's roles only sleep).
func TestDrainHandsOverAtGlobalCheckpoint(t *testing.T) {
	t.Parallel()
	endpoint := startEtcd(t)
	cli := etcdClient(t, endpoint)
	a := startAgent(t, testConfig(t, "n1", endpoint))
	startAgent(t, testConfig(t, "n2", endpoint))
	const job = "sleep-handover"
	all := []string{"master", "pserver-0", "pserver-1", "trainer-0", "trainer-1"}
	submitSpec(t, a, job, 2, 2, withCheckpointDir(t.TempDir()))
	recs := allInState(t, cli, job, api.WorkerRunning, all...)
	ctx := context.Background()
	put := func(key, value string) {
		t.Helper()
		if _, err := cli.Put(ctx, key, value); err != nil {
			t.Fatal(err)
		}
	}
	// A checkpoint from before the drain releases nothing.
	put(coord.MasterMetaKey(job), "{}")
	put(coord.GlobalCheckpointKey(job), coord.MustJSON(schema.GlobalCheckpoint{Step: 5, Steps: []int64{5}}))
	var onN2 []string
	for _, w := range all {
		if recs[w].Node == "n2" {
			onN2 = append(onN2, w)
		}
	}
	if len(onN2) == 0 || !strings.Contains(strings.Join(onN2, ","), "pserver") {
		t.Fatalf("n2 runs %v, want a pserver there (spread placement): %+v", onN2, recs)
	}

	if _, err := a.client.DrainNode(ctx, &api.NodeRequest{Name: "n2"}); err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("waiting for a global checkpoint to hand over %s from draining node n2", strings.Join(onN2, ", "))
	eventually(t, 10*time.Second, func() (bool, string) {
		st := jobStatusOf(t, a.client, job)
		return st.Reason == want, fmt.Sprintf("reason %q, want %q", st.Reason, want)
	})
	time.Sleep(2 * scheduler.MaxPassGap) // passes come and go: the workers stay
	held := workers(t, cli, job)
	for _, w := range onN2 {
		if r := held[w]; r.Node != "n2" || r.State != api.WorkerRunning || r.PID != recs[w].PID {
			t.Errorf("%s before the checkpoint = %+v, want still running on n2 as pid %d", w, r, recs[w].PID)
		}
	}
	if evs := strings.Join(events(t, cli, job), "\n"); countOf(evs, want) != 1 {
		t.Errorf("events hold %q %d times, want once:\n%s", want, countOf(evs, want), evs)
	}

	put(coord.GlobalCheckpointKey(job), coord.MustJSON(schema.GlobalCheckpoint{Step: 10, Steps: []int64{5, 10}}))
	allOn(t, cli, job, "n1", all...)
	if st := jobStatusOf(t, a.client, job); st.Reason != "" {
		t.Errorf("reason after the hand-over = %q, want none", st.Reason)
	}
	evs := strings.Join(events(t, cli, job), "\n")
	for _, w := range onN2 {
		if !strings.Contains(evs, w+" moved from n2 (draining) to n1") {
			t.Errorf("events lack the move of %s:\n%s", w, evs)
		}
	}
}
