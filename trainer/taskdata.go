package trainer

import (
	"fmt"

	"github.com/gtrain/gtrain/dataset"
)

// taskExamples reads the records of an async task in the order of its pass:
// dataset.RecordOrder of (seed, pass, task), the order the sync plan reads a
// task in, so that an async pass also differs from the last one.
func (t *trainer) taskExamples(file string, firstChunk, chunks, pass, task int) ([]dataset.Example, error) {
	var stored []dataset.Example
	for c := firstChunk; c < firstChunk+chunks; c++ {
		part, err := t.data.get(file, c)
		if err != nil {
			return nil, fmt.Errorf("trainer: task %d: %w", task, err)
		}
		stored = append(stored, part...)
	}
	order := dataset.RecordOrder(t.spec.Data.ShuffleRecords(), t.spec.Seed, pass, task, len(stored))
	return inOrder(stored, order), nil
}

// inOrder returns the records of stored at the positions order lists.
func inOrder(stored []dataset.Example, order []int) []dataset.Example {
	out := make([]dataset.Example, len(order))
	for i, r := range order {
		out[i] = stored[r]
	}
	return out
}
