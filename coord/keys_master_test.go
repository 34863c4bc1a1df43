package coord

import (
	"slices"
	"strings"
	"testing"

	clientv3 "go.etcd.io/etcd/client/v3"
)

func TestMasterKeysLiveUnderTheJob(t *testing.T) {
	const job = "mnist-1"
	cases := []struct{ key, rest string }{
		{MasterCheckpointPrefix(job), "master/checkpoint"},
		{CheckpointMarkStepPrefix(job, 42), "checkpoint/marks/000000000042/"},
	}
	for _, c := range cases {
		if gotJob, gotRest, ok := JobOfKey(c.key); !ok || gotJob != job || gotRest != c.rest {
			t.Errorf("JobOfKey(%q) = (%q, %q, %v), want (%q, %q, true)", c.key, gotJob, gotRest, ok, job, c.rest)
		}
	}
	if got, want := CheckpointMarkStepPrefix(job, 7)+MasterMark, CheckpointMarkKey(job, 7, MasterMark); got != want {
		t.Errorf("step prefix + participant = %q, mark key %q", got, want)
	}
	// A step's prefix must not cover the marks of a step whose digits extend it.
	if strings.HasPrefix(CheckpointMarkKey(job, 10, "pserver-0"), CheckpointMarkStepPrefix(job, 1)) {
		t.Errorf("marks of step 10 fall under the prefix of step 1")
	}
	// Marks sort by step, so a range from step s's prefix holds steps >= s only.
	if CheckpointMarkKey(job, 9, "pserver-0") >= CheckpointMarkStepPrefix(job, 10) {
		t.Errorf("a mark of step 9 sorts after the prefix of step 10")
	}
}

func TestParseCheckpointMarkKey(t *testing.T) {
	const job = "j"
	cases := []struct {
		name string
		key  string
		step int64
		who  string
		ok   bool
	}{
		{"master", CheckpointMarkKey(job, 12, MasterMark), 12, MasterMark, true},
		{"pserver", CheckpointMarkKey(job, 0, "pserver-3"), 0, "pserver-3", true},
		{"largest padded step", CheckpointMarkKey(job, 999_999_999_999, "master"), 999_999_999_999, "master", true},
		{"other job", CheckpointMarkKey("k", 12, MasterMark), 0, "", false},
		{"job whose name extends it", CheckpointMarkKey("jj", 12, MasterMark), 0, "", false},
		{"step prefix only", CheckpointMarkStepPrefix(job, 12), 0, "", false},
		{"no participant", CheckpointMarkPrefix(job) + "000000000012", 0, "", false},
		{"not a number", CheckpointMarkPrefix(job) + "twelve/master", 0, "", false},
		{"negative", CheckpointMarkPrefix(job) + "-1/master", 0, "", false},
		{"global record", GlobalCheckpointKey(job), 0, "", false},
	}
	for _, c := range cases {
		step, who, ok := ParseCheckpointMarkKey(job, c.key)
		if step != c.step || who != c.who || ok != c.ok {
			t.Errorf("%s: ParseCheckpointMarkKey(%q) = (%d, %q, %v), want (%d, %q, %v)", c.name, c.key, step, who, ok, c.step, c.who, c.ok)
		}
	}
}

func TestParseTrainerAndTaskKeys(t *testing.T) {
	const job = "j"
	trainers := []struct {
		key string
		id  int
		ok  bool
	}{
		{TrainerKey(job, 0), 0, true},
		{TrainerKey(job, 17), 17, true},
		{TrainerKey("jj", 17), 0, false},
		{TrainerPrefix(job), 0, false},
		{TrainerPrefix(job) + "x", 0, false},
		{TrainerPrefix(job) + "-2", 0, false},
		{WorkerKey(job, "trainer-1"), 0, false},
	}
	for _, c := range trainers {
		if id, ok := ParseTrainerKey(job, c.key); id != c.id || ok != c.ok {
			t.Errorf("ParseTrainerKey(%q) = (%d, %v), want (%d, %v)", c.key, id, ok, c.id, c.ok)
		}
	}
	tasks := []struct {
		key  string
		slot int
		id   int
		ok   bool
	}{
		{TaskKey(job, 0, 0), 0, 0, true},
		{TaskKey(job, 1, 12345678), 1, 12345678, true},
		{TaskKey(job, 1, 5), 0, 0, false},
		{TaskKey("jj", 0, 5), 0, 0, false},
		{TaskSlotPrefix(job, 0) + "abc", 0, 0, false},
	}
	for _, c := range tasks {
		if id, ok := ParseTaskKey(job, c.slot, c.key); id != c.id || ok != c.ok {
			t.Errorf("ParseTaskKey(%q, slot %d) = (%d, %v), want (%d, %v)", c.key, c.slot, id, ok, c.id, c.ok)
		}
	}
}

// The mark ranges delete exactly the steps they name, in etcd.
func TestDeleteMarksRanges(t *testing.T) {
	cli := dialTest(t)
	job := uniqueJob(t)
	put := func() {
		for _, step := range []int64{3, 9, 10, 11, 100} {
			if _, err := cli.Put(t.Context(), CheckpointMarkKey(job, step, MasterMark), "f"); err != nil {
				t.Fatal(err)
			}
		}
	}
	steps := func() (out []int64) {
		resp, err := cli.Get(t.Context(), CheckpointMarkPrefix(job), clientv3.WithPrefix())
		if err != nil {
			t.Fatal(err)
		}
		for _, kv := range resp.Kvs {
			step, _, _ := ParseCheckpointMarkKey(job, string(kv.Key))
			out = append(out, step)
		}
		return out
	}
	put()
	if _, err := cli.Txn(t.Context()).Then(DeleteMarksBefore(job, 10)).Commit(); err != nil {
		t.Fatal(err)
	}
	if got := steps(); !slices.Equal(got, []int64{10, 11, 100}) {
		t.Errorf("after DeleteMarksBefore(10): steps %v, want [10 11 100]", got)
	}
	put()
	if _, err := cli.Txn(t.Context()).Then(DeleteMarksFrom(job, 10)).Commit(); err != nil {
		t.Fatal(err)
	}
	if got := steps(); !slices.Equal(got, []int64{3, 9}) {
		t.Errorf("after DeleteMarksFrom(10): steps %v, want [3 9]", got)
	}
}
