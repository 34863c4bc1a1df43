package master

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/gtrain/gtrain/coord"
	"github.com/gtrain/gtrain/coord/schema"
	"github.com/gtrain/gtrain/internal/testing/etcdtest"
	"github.com/gtrain/gtrain/master/core"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// The write pattern of a long job, in simulated time (an injected clock, no
// sleeps): a step every simStep, each saving the master's Meta and progress
// and the blocks of the tasks it dispatched or finished; every checkpoint
// interval, three participants' marks and records, the global checkpoint and
// the pruning of old marks; an event every half hour; a new pass (a full
// rewrite of every task into the other slot) every passEvery; and the
// scheduler's compaction every 5 minutes keeping 10 (daemon's defaults).
const (
	simStep       = 10 * time.Second
	simCheckpoint = 5 * time.Minute
	simPassEvery  = 2 * time.Hour
	simRetain     = 10 * time.Minute
	simTasks      = 200_000
	simHours      = 24
	dbLimit       = 100 << 20
)

// TestLongJobKeepsEtcdSmall drives a whole day (simHours) of that pattern
// into an etcd of its own and checks the database after each hour: under
// 100 MiB, and what is in use after the last hour no more than after the
// second (plus 10 %). Without compaction it would grow by every byte
// written, hour after hour; with it, what is in use is the live state plus
// 10 minutes of history. The history kept scales with the write rate: the
// test logs the bytes written per simulated hour, about 2 KiB a step (the
// rewritten block of 256 tasks, Meta, progress). A job stepping every 50 ms
// writes 200 times the rate simulated here, about 25 MiB per 10 minutes of
// history kept: still well under 100 MiB beside the live state (under
// 2 MiB here, about 8 MiB per slot for a million tasks).
func TestLongJobKeepsEtcdSmall(t *testing.T) {
	srv := etcdtest.Start(t) // compaction is cluster-wide
	cli := dialTest(t, srv.Endpoint)
	const job = "longjob"
	_, lead := leadJob(t, cli, job, "m")
	count := &countingCommitter{inner: lead}
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	sim := &longJob{t: t, cli: cli, job: job, store: NewEtcdStore(cli, count, job), lead: count, now: start, start: start}
	sim.newPass()
	var inUse []int64
	for hour := 1; hour <= simHours; hour++ {
		before := count.bytes
		sim.hour()
		written := count.bytes - before
		st, err := cli.Status(t.Context(), srv.Endpoint)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("hour %d: %d KiB written, db %d KiB, in use %d KiB", hour, written>>10, st.DbSize>>10, st.DbSizeInUse>>10)
		if st.DbSize > dbLimit || st.DbSizeInUse > dbLimit {
			t.Fatalf("hour %d: etcd db %d bytes (%d in use), over %d", hour, st.DbSize, st.DbSizeInUse, dbLimit)
		}
		inUse = append(inUse, st.DbSizeInUse)
	}
	if last, second := inUse[len(inUse)-1], inUse[1]; last > second+second/10 {
		t.Fatalf("etcd in use grows with the job's length: %d bytes after hour 2, %d after hour %d", second, last, simHours)
	}
}

// longJob is the simulated job: its clock, queue and compaction log.
type longJob struct {
	t     *testing.T
	cli   *clientv3.Client
	job   string
	store *EtcdStore
	lead  Committer
	now   time.Time // simulated
	start time.Time
	meta  core.Meta
	next  int // the next task to dispatch
	revs  []revAt
}

type revAt struct {
	at  time.Time
	rev int64
}

// every reports whether the simulated time is a multiple of d into the job.
func (j *longJob) every(d time.Duration) bool { return j.now.Sub(j.start)%d == 0 }

// hour simulates one hour.
func (j *longJob) hour() {
	for end := j.now.Add(time.Hour); j.now.Before(end); j.now = j.now.Add(simStep) {
		j.step()
		if j.every(simCheckpoint) {
			j.checkpoint()
			j.compact()
		}
		if j.every(30 * time.Minute) {
			if err := coord.AppendEvent(j.t.Context(), j.cli, j.job, "pserver-1: checkpoint write failed: disk full"); err != nil {
				j.t.Fatal(err)
			}
		}
		if j.every(simPassEvery) {
			j.newPass()
		}
	}
}

// step dispatches one task, finishes the one before and commits the step.
func (j *longJob) step() {
	j.meta.Step++
	j.meta.PassSamples += 64
	changed := []core.TaskStatus{{ID: j.next, State: core.Pending, Trainer: 0, Deadline: j.now.Add(30 * time.Second), Order: j.next}}
	if j.next > 0 {
		changed = append([]core.TaskStatus{{ID: j.next - 1, State: core.Done, Trainer: core.NoTrainer, Order: j.next - 1}}, changed...)
	}
	j.next = (j.next + 1) % simTasks
	progress := &schema.ProgressRecord{Pass: j.meta.Pass, Passes: 100, Step: j.meta.Step, Updated: j.now}
	if err := j.store.Save(j.t.Context(), j.meta, changed, progress); err != nil {
		j.t.Fatal(err)
	}
}

// newPass rewrites every task, todo, into the other slot.
func (j *longJob) newPass() {
	all := make([]core.TaskStatus, simTasks)
	for i := range all {
		all[i] = core.TaskStatus{ID: i, State: core.Todo, Trainer: core.NoTrainer, Order: i}
	}
	j.meta.Tasks, j.meta.Slot, j.next = simTasks, 1-j.meta.Slot, 0
	j.meta.SamplesApplied = append(j.meta.SamplesApplied, j.meta.PassSamples)
	j.meta.Pass, j.meta.PassSamples = j.meta.Pass+1, 0
	if err := j.store.Save(j.t.Context(), j.meta, all, nil); err != nil {
		j.t.Fatal(err)
	}
}

// checkpoint writes what a checkpoint of two pservers and the master does.
func (j *longJob) checkpoint() {
	step := j.meta.Step
	var ops []clientv3.Op
	for i, who := range []string{"pserver-0", "pserver-1", coord.MasterMark} {
		file := fmt.Sprintf("/data/ckpt/%s/step-%012d.ckpt", who, step)
		ops = append(ops, clientv3.OpPut(coord.CheckpointMarkKey(j.job, step, who), file))
		if i < 2 {
			ops = append(ops, clientv3.OpPut(coord.CheckpointRecordKey(j.job, i), coord.MustJSON(map[string]any{"step": step, "file": file})))
		}
	}
	ops = append(ops, clientv3.OpPut(coord.MasterCheckpointRecordKey(j.job, 0), fmt.Sprintf(`{"step":%d}`, step)),
		clientv3.OpPut(coord.GlobalCheckpointKey(j.job), fmt.Sprintf(`{"step":%d}`, step)),
		coord.DeleteMarksBefore(j.job, step))
	if err := j.lead.Commit(j.t.Context(), ops...); err != nil {
		j.t.Fatal(err)
	}
}

// compact does what the cluster's scheduler does (daemon/compactor.go):
// compact to the newest revision seen at least simRetain ago.
func (j *longJob) compact() {
	resp, err := j.cli.Get(j.t.Context(), coord.MasterMetaKey(j.job), clientv3.WithCountOnly())
	if err != nil {
		j.t.Fatal(err)
	}
	j.revs = append(j.revs, revAt{at: j.now, rev: resp.Header.Revision})
	var target int64
	for len(j.revs) > 0 && !j.revs[0].at.After(j.now.Add(-simRetain)) {
		target, j.revs = j.revs[0].rev, j.revs[1:]
	}
	if target > 0 {
		if _, err := j.cli.Compact(j.t.Context(), target, clientv3.WithCompactPhysical()); err != nil {
			j.t.Fatal(err)
		}
	}
}

// countingCommitter passes commits through and counts the bytes they put.
type countingCommitter struct {
	inner Committer
	bytes int64
}

func (c *countingCommitter) Commit(ctx context.Context, ops ...clientv3.Op) error {
	for _, op := range ops {
		c.bytes += int64(len(op.KeyBytes()) + len(op.ValueBytes()))
	}
	return c.inner.Commit(ctx, ops...)
}
