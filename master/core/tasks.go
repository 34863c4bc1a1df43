package core

import (
	"fmt"

	"github.com/gtrain/gtrain/dataset"
)

// TaskSet is the job's tasks with the record count of each of their chunks,
// derived from the shards' chunk indices (never from reading the records).
type TaskSet struct {
	Tasks        []Task
	ChunkRecords map[int][]int // task ID -> records per chunk
	Records      int
}

// CutTasks lists the chunks of files (in order, each opened by open) and
// groups every chunksPerTask consecutive chunks of one file into a task.
func CutTasks(open dataset.Opener, files []string, chunksPerTask int) (*TaskSet, error) {
	if chunksPerTask < 1 {
		return nil, fmt.Errorf("chunks_per_task must be >= 1, got %d", chunksPerTask)
	}
	ts := &TaskSet{ChunkRecords: map[int][]int{}}
	for _, f := range files {
		_, ix, err := dataset.ReadShardMetaIn(open, f)
		if err != nil {
			return nil, fmt.Errorf("cut tasks: %w", err)
		}
		for first := 0; first < len(ix.Chunks); first += chunksPerTask {
			last := min(first+chunksPerTask, len(ix.Chunks))
			t := Task{ID: len(ts.Tasks), File: f, FirstChunk: first, Chunks: last - first}
			var counts []int
			for _, c := range ix.Chunks[first:last] {
				t.Records += c.Records
				counts = append(counts, c.Records)
			}
			if t.Records == 0 {
				continue
			}
			ts.Tasks = append(ts.Tasks, t)
			ts.ChunkRecords[t.ID] = counts
			ts.Records += t.Records
		}
	}
	if len(ts.Tasks) == 0 {
		return nil, fmt.Errorf("cut tasks: the training shards hold no records (%d files)", len(files))
	}
	return ts, nil
}
