package core

import (
	"fmt"
	"time"
)

// Fixtures shared by the tests of this package and of the master's driver
// (a Go test file cannot be imported), as small as the tests need.

// FixtureTaskSet is 6 tasks, 42 records, with uneven chunks; task i reads file
// "shard-i" from chunk 2*i so that a slice names its task unambiguously.
func FixtureTaskSet() *TaskSet {
	chunks := [][]int{{5, 3}, {4}, {7, 1, 2}, {6}, {3, 3}, {8}}
	ts := &TaskSet{ChunkRecords: map[int][]int{}}
	for id, cs := range chunks {
		t := Task{ID: id, File: fmt.Sprintf("shard-%d", id), FirstChunk: 2 * id, Chunks: len(cs)}
		for _, n := range cs {
			t.Records += n
		}
		ts.Tasks = append(ts.Tasks, t)
		ts.ChunkRecords[id] = cs
		ts.Records += t.Records
	}
	return ts
}

// RecordRef names one record of the training set.
type RecordRef struct {
	File         string
	Chunk, Index int
}

// AllRecords is every record of ts.
func AllRecords(ts *TaskSet) map[RecordRef]bool {
	out := map[RecordRef]bool{}
	for _, t := range ts.Tasks {
		for ci, n := range ts.ChunkRecords[t.ID] {
			for i := range n {
				out[RecordRef{t.File, t.FirstChunk + ci, i}] = true
			}
		}
	}
	return out
}

// SliceRecords lists the records of sl in order.
func SliceRecords(sl []Slice) []RecordRef {
	var out []RecordRef
	for _, s := range sl {
		for i := range s.Count {
			out = append(out, RecordRef{s.File, s.Chunk, s.First + i})
		}
	}
	return out
}

// FixtureSyncConfig is a sync job of the given shape, seed 7.
func FixtureSyncConfig(trainers, batch, passes int) CoreConfig {
	return CoreConfig{Sync: true, Trainers: trainers, MicroBatches: trainers, Batch: batch, Passes: passes,
		Queue:    QueueConfig{Timeout: time.Hour, MaxFailures: 3, Seed: 7},
		ModelDir: "/models/x", LongPoll: 2 * time.Second}
}

// FixtureAsyncConfig is an async job of the given shape, seed 7, short timeouts.
func FixtureAsyncConfig(trainers, batch, passes int) CoreConfig {
	return CoreConfig{Trainers: trainers, Batch: batch, Passes: passes,
		Queue:    QueueConfig{Timeout: 10 * time.Second, MaxFailures: 3, Seed: 7},
		ModelDir: "/models/x", LongPoll: 5 * time.Millisecond}
}
