package coord

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

func TestJobOfKeyRoundTrip(t *testing.T) {
	const job = "mnist-1"
	cases := []struct {
		key, rest string
	}{
		{JobKey(job), "record"},
		{StateKey(job), "state"},
		{ProgressKey(job), "progress"},
		{MasterMetaKey(job), "master/meta"},
		{ElectionPrefix(job), "master/election"},
		{MasterHolderKey(job), "master/holder"},
		{WorkerPrefix(job), "workers/"},
		{WorkerKey(job, "trainer-3"), "workers/trainer-3"},
		{PserverPrefix(job), "pservers/"},
		{PserverKey(job, 2), "pservers/2"},
		{TrainerPrefix(job), "trainers/"},
		{TrainerKey(job, 17), "trainers/17"},
		{EventPrefix(job), "events/"},
		{CheckpointPrefix(job), "checkpoints"},
		{GlobalCheckpointKey(job), "checkpoint/global"},
		{CheckpointMarkPrefix(job), "checkpoint/marks/"},
		{CheckpointMarkKey(job, 42, "master"), "checkpoint/marks/000000000042/master"},
		{JobPrefix(job), ""},
	}
	for _, c := range cases {
		gotJob, gotRest, ok := JobOfKey(c.key)
		if !ok || gotJob != job || gotRest != c.rest {
			t.Errorf("JobOfKey(%q) = (%q, %q, %v), want (%q, %q, true)", c.key, gotJob, gotRest, ok, job, c.rest)
		}
		if !strings.HasPrefix(c.key, Root) {
			t.Errorf("key %q is not under Root %q", c.key, Root)
		}
	}
}

func TestJobOfKeyRejectsKeysOutsideJobs(t *testing.T) {
	for _, key := range []string{
		NodeKey("n1"),
		TaskKey("mnist", 0, 3),
		TaskPrefix("mnist"),
		JobsPrefix(),
		JobsPrefix() + "no-slash",
		"/other/jobs/x/state",
		"",
	} {
		if job, rest, ok := JobOfKey(key); ok {
			t.Errorf("JobOfKey(%q) = (%q, %q, true), want ok=false", key, job, rest)
		}
	}
}

// A job's prefix must not cover the keys of a job whose name extends it,
// or a prefix delete of "a" would wipe job "ab".
func TestJobPrefixesDoNotOverlap(t *testing.T) {
	for _, pair := range []struct{ prefix, key string }{
		{JobPrefix("a"), StateKey("ab")},
		{TaskPrefix("a"), TaskKey("ab", 0, 1)},
		{TaskSlotPrefix("a", 1), TaskKey("a", 10, 1)},
		{TaskSlotPrefix("a", 0), TaskKey("a", 1, 1)},
		{NodePrefix(), JobKey("x")},
		{JobsPrefix(), TaskKey("x", 0, 0)},
		{CheckpointMarkPrefix("a"), GlobalCheckpointKey("a")},
	} {
		if strings.HasPrefix(pair.key, pair.prefix) {
			t.Errorf("key %q falls under unrelated prefix %q", pair.key, pair.prefix)
		}
	}
	for _, slot := range []int{0, 1} {
		key := TaskKey("a", slot, 5)
		if !strings.HasPrefix(key, TaskSlotPrefix("a", slot)) || !strings.HasPrefix(key, TaskPrefix("a")) {
			t.Errorf("TaskKey %q is not under TaskSlotPrefix %q and TaskPrefix %q", key, TaskSlotPrefix("a", slot), TaskPrefix("a"))
		}
	}
	if TaskKey("a", 0, 5) == TaskKey("a", 1, 5) {
		t.Errorf("slots 0 and 1 share task key %q", TaskKey("a", 0, 5))
	}
	if !strings.HasPrefix(WorkerKey("a", "w"), JobPrefix("a")) {
		t.Errorf("WorkerKey %q is not under JobPrefix %q", WorkerKey("a", "w"), JobPrefix("a"))
	}
}

// A range read returns keys in byte order; task keys must come back in ID order.
func TestTaskKeySortsInIDOrder(t *testing.T) {
	ids := []int{0, 1, 2, 9, 10, 11, 99, 100, 101, 999, 1000, 9999, 10000, 99999, 100000,
		999999, 1000000, 9999999, 10000000, 12345678, 99999998, 99999999}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		ids = append(ids, rng.IntN(100_000_000))
	}
	keys := make([]string, len(ids))
	for i, id := range ids {
		keys[i] = TaskKey("job", 1, id)
	}
	slices.Sort(keys)
	slices.Sort(ids)
	for i, id := range ids {
		if want := TaskKey("job", 1, id); keys[i] != want {
			t.Fatalf("position %d: lexicographic order has %q, numeric order has %q", i, keys[i], want)
		}
	}
}

func TestCheckpointMarkKeySortsByStep(t *testing.T) {
	steps := []int64{1000000, 0, 10, 9, 2, 100, 999_999_999_999, 11}
	keys := make([]string, 0, 2*len(steps))
	for _, s := range steps {
		keys = append(keys, CheckpointMarkKey("job", s, "pserver-1"), CheckpointMarkKey("job", s, "master"))
	}
	slices.Sort(keys)
	slices.Sort(steps)
	for i, s := range steps {
		// Within a step, participants sort by name: "master" < "pserver-1".
		if want := CheckpointMarkKey("job", s, "master"); keys[2*i] != want {
			t.Errorf("position %d: got %q, want %q", 2*i, keys[2*i], want)
		}
		if want := CheckpointMarkKey("job", s, "pserver-1"); keys[2*i+1] != want {
			t.Errorf("position %d: got %q, want %q", 2*i+1, keys[2*i+1], want)
		}
	}
	for _, k := range keys {
		if !strings.HasPrefix(k, CheckpointMarkPrefix("job")) {
			t.Errorf("mark %q is not under %q", k, CheckpointMarkPrefix("job"))
		}
	}
}

func TestCheckpointRecordKeys(t *testing.T) {
	if got, want := CheckpointRecordKey("j", 3), CheckpointPrefix("j")+"/3"; got != want {
		t.Errorf("CheckpointRecordKey = %q, want %q", got, want)
	}
	if got, want := MasterCheckpointRecordKey("j", 0), MasterCheckpointPrefix("j")+"/0"; got != want {
		t.Errorf("MasterCheckpointRecordKey = %q, want %q", got, want)
	}
}
