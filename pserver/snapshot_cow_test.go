package pserver

import (
	"slices"
	"strings"
	"testing"

	"github.com/gtrain/gtrain/checkpoint"
	"github.com/gtrain/gtrain/internal/clock"
	"github.com/gtrain/gtrain/jobspec"
)

// writeOut reads every section of snap the way the checkpointer does, a
// piece at a time, and releases it; it returns the values read.
func writeOut(s *Shard, snap *Snapshot) *checkpoint.Snapshot {
	out := &checkpoint.Snapshot{Step: snap.Step}
	for _, sec := range snap.Sections {
		data := make([]float32, sec.Len())
		for off := 0; off < len(data); {
			off += sec.Source.ReadFloats(data[off:min(off+3, len(data))], off)
		}
		out.Sections = append(out.Sections, checkpoint.Section{Name: sec.Name, Data: data})
	}
	s.Release(snap)
	return out
}

// paramsOf lists a snapshot's parameters (not the optimizer's slots), in
// block order like params.
func paramsOf(snap *checkpoint.Snapshot) []float32 {
	var out []float32
	for _, sec := range snap.Sections {
		if strings.HasPrefix(sec.Name, "param/") {
			out = append(out, sec.Data...)
		}
	}
	return out
}

func flat(secs []checkpoint.Section) []float32 {
	var out []float32
	for _, sec := range secs {
		out = append(out, sec.Data...)
	}
	return out
}

// A snapshot holds its step's values whatever the shard does before they
// are written: a step applied, a restore, a reinit. The values read equal a
// snapshot written before any change.
func TestSnapshotKeepsItsStepWhileTheShardChanges(t *testing.T) {
	one := func(int, int) float32 { return 1 }
	for _, tc := range []struct {
		name   string
		change func(s *Shard, reference *checkpoint.Snapshot)
	}{
		{"a step applied", func(s *Shard, _ *checkpoint.Snapshot) { mustPush(t, s, grad(s, 0, 1, 1, one)) }},
		{"a reinit", func(s *Shard, _ *checkpoint.Snapshot) { s.Reinit(1, nil) }},
		{"a restore", func(s *Shard, ref *checkpoint.Snapshot) {
			zeroed := slices.Clone(ref.Sections)
			for i := range zeroed {
				zeroed[i].Data = make([]float32, len(zeroed[i].Data))
			}
			if err := s.Restore(0, 1, zeroed); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		s := testShard(t, jobspec.ModeSync, 1, "adam")
		s.copyMax = 1 << 20 // copy it all: no writer waits here
		mustPush(t, s, grad(s, 0, 0, 1, one))
		s.SnapshotNow()
		reference := writeOut(s, <-s.Snapshots())
		s.SnapshotNow()
		snap := <-s.Snapshots()
		// Write the first section, then change the shard mid-snapshot.
		first := make([]float32, snap.Sections[0].Len())
		snap.Sections[0].Source.ReadFloats(first, 0)
		tc.change(s, reference)
		if slices.Equal(paramsOf(reference), params(s)) {
			t.Fatalf("%s: the shard's values did not change; the test proves nothing", tc.name)
		}
		got := writeOut(s, snap)
		got.Sections[0].Data = first
		if got.Step != reference.Step || !slices.Equal(flat(got.Sections), flat(reference.Sections)) {
			t.Errorf("%s: snapshot of step %d changed: got %v, want %v", tc.name, got.Step, flat(got.Sections), flat(reference.Sections))
		}
	}
}

// A snapshot written before the shard changes copies nothing: memory holds
// one copy of the shard between checkpoints, and the pause is only taking it.
func TestSnapshotWrittenInTimeCopiesNothing(t *testing.T) {
	s := testShard(t, jobspec.ModeSync, 1, "adam")
	one := func(int, int) float32 { return 1 }
	s.SnapshotNow()
	snap := <-s.Snapshots()
	if s.SnapshotNow() {
		t.Fatal("a second snapshot was taken while the first is being written")
	}
	for _, sec := range snap.Sections {
		sec.Source.ReadFloats(make([]float32, sec.Len()), 0)
	}
	mustPush(t, s, grad(s, 0, 0, 1, one))
	for i, h := range snap.held {
		if !h.done || h.saved != nil {
			t.Errorf("section %d: done %v, copy of %d floats kept", i, h.done, len(h.saved))
		}
	}
	s.Release(snap)
	if !s.SnapshotNow() {
		t.Fatal("no snapshot taken after the previous one was released")
	}
}

// mustPush pushes g through a driver, which preserves a snapshot's values
// the push changes; the fake clock never moves, so a push that waited for
// the writer would hang the test.
func mustPush(t *testing.T, s *Shard, g *Gradient) {
	t.Helper()
	if applied, _, err := newShardDriver(s, clock.NewFake(testTime)).push(g); err != nil || !applied {
		t.Fatalf("push: applied %v, %v", applied, err)
	}
}
