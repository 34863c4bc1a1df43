package master

import (
	"fmt"
	"reflect"
	"slices"
	"testing"

	"github.com/gtrain/gtrain/dataset"
	"github.com/gtrain/gtrain/master/core"
)

// driverPasses runs a sync driver over coreTaskSet for passes passes and
// returns the records each pass read, in order.
func driverPasses(t *testing.T, noShuffle bool, passes int) [][]core.RecordRef {
	t.Helper()
	ts := core.FixtureTaskSet()
	const trainers, batch, stepsPerPass = 3, 4, 4 // 42 records, 12 a step
	cfg := core.FixtureSyncConfig(trainers, batch, passes)
	cfg.Queue.NoShuffle = noShuffle
	c := mustDriver(t, t.Context(), cfg, ts, &MemStore{}, &fakeEvaluator{}, newFakeClock())
	var out [][]core.RecordRef
	for pass := range passes {
		start := int64(pass * stepsPerPass)
		got := runSyncSteps(t, c, start, start+stepsPerPass)
		checkCoversOnce(t, ts, got, fmt.Sprintf("pass %d", pass))
		out = append(out, got)
		waitCore(t, c, fmt.Sprintf("end of pass %d", pass), func(m core.Meta) bool { return m.Pass == pass+1 })
	}
	return out
}

// TestDriverSyncShufflesRecordsWithinTasks: through the driver, each pass
// reads every task's records in dataset.RecordOrder of (seed, pass, task),
// a second driver with the same seed reads exactly the same, and with
// NoShuffle every pass reads the stored order: tasks by ID, records in turn.
func TestDriverSyncShufflesRecordsWithinTasks(t *testing.T) {
	ts := core.FixtureTaskSet()
	shuffled := driverPasses(t, false, 2)
	if again := driverPasses(t, false, 2); !reflect.DeepEqual(again, shuffled) {
		t.Fatal("two drivers with the same seed read different orders")
	}
	for pass, got := range shuffled {
		// coreTaskSet's task i is file shard-i: group the records by task.
		byTask := map[string][]core.RecordRef{}
		for _, r := range got {
			byTask[r.File] = append(byTask[r.File], r)
		}
		for _, task := range ts.Tasks {
			stored := storedRecords(ts, task)
			for i, r := range dataset.RecordOrder(true, 7, pass, task.ID, task.Records) {
				if byTask[task.File][i] != stored[r] {
					t.Fatalf("pass %d task %d position %d: %v, want stored record %d %v", pass, task.ID, i, byTask[task.File][i], r, stored[r])
				}
			}
		}
	}
	var stored []core.RecordRef
	for _, task := range ts.Tasks {
		stored = append(stored, storedRecords(ts, task)...)
	}
	for pass, got := range driverPasses(t, true, 2) {
		if !slices.Equal(got, stored) {
			t.Fatalf("pass %d without shuffle read %v, want the stored order %v", pass, got, stored)
		}
	}
}

// storedRecords lists a task's records in their stored order.
func storedRecords(ts *core.TaskSet, task core.Task) []core.RecordRef {
	var out []core.RecordRef
	for ci, n := range ts.ChunkRecords[task.ID] {
		for i := range n {
			out = append(out, core.RecordRef{File: task.File, Chunk: task.FirstChunk + ci, Index: i})
		}
	}
	return out
}
