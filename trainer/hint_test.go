package trainer

import (
	"os"
	"slices"
	"testing"

	"github.com/gtrain/gtrain/api"
	"github.com/gtrain/gtrain/dataset"
)

// TestHintReadIsUsedOnlyForTheSameSlices: the records of the master's hint
// are read once started and serve the next work when it names the same
// slices; a next work of other slices (the hint was wrong) reads its own,
// and a hint never started is read when asked for.
func TestHintReadIsUsedOnlyForTheSameSlices(t *testing.T) {
	path := writeShard(t, 10) // chunks of 4, 4, 2; record i has label i
	labels := func(ex []dataset.Example) []float32 {
		var out []float32
		for _, e := range ex {
			out = append(out, e.Label)
		}
		return out
	}
	hinted := []*api.Slice{{File: path, Chunk: 1, First: 1, Count: 2}}
	other := []*api.Slice{{File: path, Chunk: 2, First: 0, Count: 2}}
	tr := &trainer{data: newChunkCache(4)}
	tr.data.open = os.Open

	tr.hintOf(&api.GetStepResponse{Step: 3, NextSlices: hinted}).start()
	<-tr.carry.hint.done
	removed := t.TempDir() + "/gone"
	if err := os.Rename(path, removed); err != nil { // the hint's records must not be read again
		t.Fatal(err)
	}
	tr.data.close()
	tr.data = newChunkCache(4) // nothing open, nothing cached
	ex, err := tr.examplesOf(&api.GetStepResponse{Step: 4, Slices: hinted})
	if err != nil || !slices.Equal(labels(ex), []float32{5, 6}) {
		t.Fatalf("the hinted slices: %v, %v; want records 5 and 6 from the hint's read", labels(ex), err)
	}
	if err := os.Rename(removed, path); err != nil {
		t.Fatal(err)
	}

	tr.hintOf(&api.GetStepResponse{Step: 4, NextSlices: hinted}).start()
	ex, err = tr.examplesOf(&api.GetStepResponse{Step: 5, Slices: other})
	if err != nil || !slices.Equal(labels(ex), []float32{8, 9}) {
		t.Fatalf("other slices than the hint's: %v, %v; want records 8 and 9", labels(ex), err)
	}
	if tr.carry.hint != nil {
		t.Fatal("a hint kept after the next work was read")
	}

	tr.hintOf(&api.GetStepResponse{Step: 5, NextSlices: other}) // never started
	ex, err = tr.examplesOf(&api.GetStepResponse{Step: 6, Slices: other})
	if err != nil || !slices.Equal(labels(ex), []float32{8, 9}) {
		t.Fatalf("a hint not started: %v, %v; want records 8 and 9", labels(ex), err)
	}
}
