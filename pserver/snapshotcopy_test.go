package pserver

import (
	"slices"
	"testing"

	"github.com/gtrain/gtrain/jobspec"
)

// A step that changes values a snapshot has not written copies them into
// the spare buffer PrepareCopies touched, the same memory at every
// checkpoint; a copy the buffer cannot hold is allocated. Either way the
// snapshot holds its step's values.
func TestSnapshotCopiesIntoTheSpareBuffer(t *testing.T) {
	one := func(int, int) float32 { return 1 }
	for _, tc := range []struct {
		name    string
		copyMax int
		inSpare bool
	}{{"the buffer holds the shard", 1 << 20, true}, {"a buffer smaller than a section", 1, false}} {
		s := testShard(t, jobspec.ModeSync, 1, "adam")
		s.copyMax = tc.copyMax
		s.PrepareCopies()
		for step := range int64(2) {
			s.SnapshotNow()
			reference := writeOut(s, <-s.Snapshots())
			s.SnapshotNow()
			snap := <-s.Snapshots()
			s.copyMax = 1 << 20 // the push must not wait for a writer: nothing reads here
			mustPush(t, s, grad(s, 0, step, 1, one))
			s.copyMax = tc.copyMax
			first := snap.held[0].saved
			if len(first) == 0 {
				t.Fatalf("%s: step %d: nothing copied before the change", tc.name, step)
			}
			if inSpare := &first[0] == &s.spare[0]; inSpare != tc.inSpare {
				t.Errorf("%s: step %d: first section copied into the spare buffer: %v, want %v", tc.name, step, inSpare, tc.inSpare)
			}
			if got := writeOut(s, snap); !slices.Equal(flat(got.Sections), flat(reference.Sections)) {
				t.Errorf("%s: step %d: snapshot changed: got %v, want %v", tc.name, step, flat(got.Sections), flat(reference.Sections))
			}
			if len(s.spareFree) != len(s.spare) {
				t.Errorf("%s: step %d: %d of %d spare floats free after the release", tc.name, step, len(s.spareFree), len(s.spare))
			}
		}
	}
}
