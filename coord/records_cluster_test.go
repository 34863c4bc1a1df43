package coord

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/gtrain/gtrain/api"
	"github.com/gtrain/gtrain/coord/schema"
)

// The cluster keys live apart from the liveness keys and the jobs: a prefix
// read or delete of one never touches another.
func TestClusterKeysDoNotOverlap(t *testing.T) {
	for _, pair := range []struct{ prefix, key string }{
		{NodePrefix(), NodeInfoKey("n1")},
		{NodeInfoPrefix(), NodeKey("n1")},
		{NodeInfoPrefix(), DrainKey("n1")},
		{DrainPrefix(), NodeInfoKey("n1")},
		{JobsPrefix(), NodeInfoKey("n1")},
		{NodeInfoPrefix(), SchedulerElectionPrefix()},
		{StoragePrefix("a"), StorageKey("ab", "n1")},
	} {
		if strings.HasPrefix(pair.key, pair.prefix) {
			t.Errorf("key %q falls under unrelated prefix %q", pair.key, pair.prefix)
		}
	}
	for _, key := range []string{PlacementKey("a"), StorageKey("a", "n1")} {
		if !strings.HasPrefix(key, JobPrefix("a")) {
			t.Errorf("%q is not under JobPrefix(a): a purge would leave it behind", key)
		}
	}
}

// A placement is written only by the scheduler that still leads, and only
// for the job whose record it read.
func TestCommitPlacementFenced(t *testing.T) {
	cli := dialTest(t)
	ctx := t.Context()
	job := uniqueJob(t)
	resp, err := cli.Put(ctx, JobKey(job), "{}")
	if err != nil {
		t.Fatal(err)
	}
	fence := resp.Header.Revision
	lead := campaign(t, cli, newSession(t, cli), SchedulerElectionPrefix()+"-"+job, "n1")
	rec := schema.PlacementRecord{Gen: 1, Workers: map[string]schema.Assignment{"master": {Node: "n1", Gen: 1}}}
	if err := CommitPlacement(ctx, lead, job, fence, rec, []string{"master placed on n1"}); err != nil {
		t.Fatalf("CommitPlacement while leading: %v", err)
	}
	var got schema.PlacementRecord
	if _, err := GetJSON(ctx, cli, PlacementKey(job), &got); err != nil || got.Nodes()["master"] != "n1" {
		t.Fatalf("placement = %+v, %v; want master on n1", got, err)
	}
	evs, err := ListJSON[api.Event](ctx, cli, EventPrefix(job))
	if err != nil || len(evs) != 1 || evs[0].What != "master placed on n1" {
		t.Errorf("events = %+v, %v; want the placement's event", evs, err)
	}
	if err := CommitPlacement(ctx, lead, job, fence+1, rec, nil); !errors.Is(err, ErrFenced) {
		t.Errorf("CommitPlacement for another incarnation of the job = %v, want ErrFenced", err)
	}
	lead.Release()
	rec.Gen = 2
	if err := CommitPlacement(context.Background(), lead, job, fence, rec, nil); !errors.Is(err, ErrFenced) {
		t.Errorf("CommitPlacement after resigning = %v, want ErrFenced", err)
	}
	if _, err := GetJSON(ctx, cli, PlacementKey(job), &got); err != nil || got.Gen != 1 {
		t.Errorf("placement after fenced writes = %+v, %v; want gen 1 untouched", got, err)
	}
}

func TestParseDrainKey(t *testing.T) {
	if node, ok := ParseDrainKey(DrainKey("n1.example")); !ok || node != "n1.example" {
		t.Errorf("ParseDrainKey(DrainKey(n1.example)) = %q, %v", node, ok)
	}
	for _, key := range []string{DrainPrefix(), NodeKey("n1"), NodeInfoKey("n1"), DrainKey("a/b")} {
		if node, ok := ParseDrainKey(key); ok {
			t.Errorf("ParseDrainKey(%q) = %q, true; want ok=false", key, node)
		}
	}
}

// A placement's events count against MaxJobEvents as appended ones do.
func TestCommitPlacementTrimsEvents(t *testing.T) {
	cli := dialTest(t)
	job := uniqueJob(t)
	resp, err := cli.Put(t.Context(), JobKey(job), "{}")
	if err != nil {
		t.Fatal(err)
	}
	base := fillEvents(t, cli, job)
	lead := campaign(t, cli, newSession(t, cli), SchedulerElectionPrefix()+"-"+job, "n1")
	rec := schema.PlacementRecord{Gen: 1, Workers: map[string]schema.Assignment{"master": {Node: "n1", Gen: 1}}}
	if err := CommitPlacement(t.Context(), lead, job, resp.Header.Revision, rec, []string{"master placed on n1"}); err != nil {
		t.Fatal(err)
	}
	checkNewestKept(t, cli, job, base, "master placed on n1")
}
