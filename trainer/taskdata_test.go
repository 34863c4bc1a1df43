package trainer

import (
	"slices"
	"testing"

	"github.com/gtrain/gtrain/dataset"
	"github.com/gtrain/gtrain/jobspec"
)

// TestTaskExamplesFollowRecordOrder: an async trainer reads a task (here
// chunks 1 and 2 of a shard: records 4..9) in dataset.RecordOrder of its
// pass, another order next pass, and in the stored order with shuffle off.
func TestTaskExamplesFollowRecordOrder(t *testing.T) {
	path := writeShard(t, 10) // chunks of 4, 4, 2; record i has label i
	off := false
	for _, shuffle := range []*bool{nil, &off} {
		tr := &trainer{spec: &jobspec.Spec{Seed: 5, Data: jobspec.DataSpec{Shuffle: shuffle}}, data: newChunkCache(4)}
		var passes [][]float32
		for pass := range 2 {
			ex, err := tr.taskExamples(path, 1, 2, pass, 3)
			if err != nil {
				t.Fatal(err)
			}
			var labels []float32
			for _, e := range ex {
				labels = append(labels, e.Label)
			}
			var want []float32
			for _, r := range dataset.RecordOrder(shuffle == nil, 5, pass, 3, 6) {
				want = append(want, float32(4+r))
			}
			if !slices.Equal(labels, want) {
				t.Fatalf("shuffle %v pass %d: read %v, want %v", shuffle == nil, pass, labels, want)
			}
			passes = append(passes, labels)
		}
		if differ := !slices.Equal(passes[0], passes[1]); differ != (shuffle == nil) {
			t.Errorf("shuffle %v: passes read %v and %v", shuffle == nil, passes[0], passes[1])
		}
	}
	tr := &trainer{spec: &jobspec.Spec{}, data: newChunkCache(4)}
	if _, err := tr.taskExamples(path, 2, 2, 0, 0); err == nil {
		t.Error("a task past the shard's last chunk read without error")
	}
}
