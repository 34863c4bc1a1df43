package pserver

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/gtrain/gtrain/internal/clock"
	"github.com/gtrain/gtrain/jobspec"
)

var testTime = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// The pure shard waits for nothing: a push that would change values a
// snapshot has not saved is refused, untouched, until they are preserved;
// a push that changes no values (a micro-batch that does not complete its
// step, or a step of no records) goes ahead.
func TestPushRefusedUntilTheSnapshotIsPreserved(t *testing.T) {
	one := func(int, int) float32 { return 1 }
	for _, tc := range []struct {
		name    string
		mode    jobspec.Mode
		records int64
		before  []int // micro-batches pushed before the one tested (sync, 3 per step)
		mb      int
		refused bool
	}{
		{"async", jobspec.ModeAsync, 1, nil, 0, true},
		{"async, no records", jobspec.ModeAsync, 0, nil, 0, false},
		{"sync, first of three", jobspec.ModeSync, 1, nil, 0, false},
		{"sync, last of three", jobspec.ModeSync, 1, []int{0, 1}, 2, true},
		{"sync, the gap that completes the step", jobspec.ModeSync, 1, []int{0, 2}, 1, true},
		{"sync, a repeat", jobspec.ModeSync, 1, []int{0, 1}, 1, false},
		{"sync, last of a step of no records", jobspec.ModeSync, 0, []int{0, 1}, 2, false},
	} {
		s := testShard(t, tc.mode, 3, "adam")
		for _, mb := range tc.before {
			if _, _, err := s.Push(grad(s, mb, 0, tc.records, one)); err != nil {
				t.Fatal(err)
			}
		}
		s.SnapshotNow()
		snap := <-s.Snapshots()
		g := grad(s, tc.mb, 0, tc.records, one)
		_, _, err := s.Push(g)
		if refused := errors.Is(err, ErrSnapshotUnsaved); refused != tc.refused {
			t.Errorf("%s: push refused %v (%v), want %v", tc.name, refused, err, tc.refused)
		}
		if !tc.refused {
			continue
		}
		untimed := func(copy func()) time.Duration { copy(); return 0 }
		if s.Preserve(untimed) != snap || s.Preserve(untimed) != nil {
			t.Errorf("%s: Preserve: want the snapshot once, then nothing to copy", tc.name)
		}
		if applied, _, err := s.Push(g); err != nil || !applied {
			t.Errorf("%s: push after Preserve: applied %v, %v", tc.name, applied, err)
		}
	}
}

// pushAsync runs d.push(g) in a goroutine; the channel gets its error.
func pushAsync(d shardDriver, g *Gradient) <-chan error {
	done := make(chan error, 1)
	go func() { _, _, err := d.push(g); done <- err }()
	return done
}

// waitingOn returns once the driver started its timer: it is waiting for
// the writer.
func waitingOn(t *testing.T, c *clock.Fake) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := c.WaitForTimers(ctx, 1); err != nil {
		t.Fatal("the push never waited for the writer")
	}
}

// A push waits while more than copyMax of the snapshot is left to write,
// and goes on once the writer brought it under: what is copied stays within
// the bound, the snapshot still holds its step, and its pause is the wait.
func TestPushWaitsForTheWriterBeyondTheCopyBound(t *testing.T) {
	s := testShard(t, jobspec.ModeSync, 1, "adam")
	c := clock.NewFake(testTime)
	one := func(int, int) float32 { return 1 }
	s.SnapshotNow()
	reference := writeOut(s, <-s.Snapshots())
	s.SnapshotNow()
	snap := <-s.Snapshots()
	s.copyMax = snap.Sections[len(snap.Sections)-1].Len()
	pushed := pushAsync(newShardDriver(s, c), grad(s, 0, 0, 1, one))
	waitingOn(t, c)
	c.Advance(100 * time.Millisecond)
	if s.Step() != 0 {
		t.Fatal("the push was applied with the whole snapshot left to write")
	}
	got := make([][]float32, len(snap.Sections))
	for i, sec := range snap.Sections[:len(snap.Sections)-1] {
		got[i] = make([]float32, sec.Len())
		sec.Source.ReadFloats(got[i], 0)
	}
	if err := <-pushed; err != nil {
		t.Fatal(err)
	}
	last := snap.held[len(snap.held)-1]
	if s.Step() != 1 || len(last.saved) != s.copyMax {
		t.Fatalf("after the writer passed the bound: step %d, copy of %d floats (bound %d)", s.Step(), len(last.saved), s.copyMax)
	}
	sec := snap.Sections[len(snap.Sections)-1]
	got[len(got)-1] = make([]float32, sec.Len())
	sec.Source.ReadFloats(got[len(got)-1], 0)
	if pause := s.Release(snap); pause != 100*time.Millisecond {
		t.Errorf("pause %s, want the push's wait (100ms) counted", pause)
	}
	for i, want := range reference.Sections {
		if !slices.Equal(got[i], want.Data) {
			t.Errorf("section %s: %v, want %v", want.Name, got[i], want.Data)
		}
	}
}

// A disk that stops writing costs one wait of writerWait: the push that
// gives up copies what is left, and the pushes after it have nothing left to
// copy, so they do not wait (each waited writerWait again, a 5 s push for as
// long as a hung disk stayed hung). The snapshot still holds its step.
func TestOnlyTheFirstPushWaitsForAStuckWriter(t *testing.T) {
	s := testShard(t, jobspec.ModeSync, 1, "adam")
	c := clock.NewFake(testTime)
	d := newShardDriver(s, c)
	one := func(int, int) float32 { return 1 }
	s.SnapshotNow()
	reference := writeOut(s, <-s.Snapshots())
	s.SnapshotNow()
	snap := <-s.Snapshots() // never written: the writer is stuck
	s.copyMax = 1
	pushed := pushAsync(d, grad(s, 0, 0, 1, one))
	waitingOn(t, c)
	c.Advance(d.writerWait - time.Millisecond)
	select {
	case <-pushed:
		t.Fatal("the push gave up on the writer before writerWait")
	default:
	}
	c.Advance(time.Millisecond)
	if err := <-pushed; err != nil {
		t.Fatal(err)
	}
	for step := int64(1); step < 3; step++ {
		// The clock stands still: a push that waited would never return.
		mustPush(t, s, grad(s, 0, step, 1, one))
	}
	if got := writeOut(s, snap); !slices.Equal(flat(got.Sections), flat(reference.Sections)) {
		t.Errorf("snapshot changed: got %v, want %v", flat(got.Sections), flat(reference.Sections))
	}
	if pause := s.Release(snap); pause != d.writerWait {
		t.Errorf("pause %s, want the one wait of writerWait (%s)", pause, d.writerWait)
	}
}
