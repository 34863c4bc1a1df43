package checkpoint

import (
	"context"
	"errors"
	"os"
	"testing"
)

// faultyRecorder injects recorder failures. With casErr set, a CAS fails with
// casErr after (casApplies) or instead of applying the write: a lost reply.
type faultyRecorder struct {
	Recorder
	loadErr    error
	casErr     error
	casApplies bool
}

func (f *faultyRecorder) Load(ctx context.Context, index int) (Record, int64, bool, error) {
	if f.loadErr != nil {
		return Record{}, 0, false, f.loadErr
	}
	return f.Recorder.Load(ctx, index)
}

func (f *faultyRecorder) CompareAndSwap(ctx context.Context, rec Record, prev int64) (int64, error) {
	if f.casErr == nil {
		return f.Recorder.CompareAndSwap(ctx, rec, prev)
	}
	if f.casApplies {
		if _, err := f.Recorder.CompareAndSwap(ctx, rec, prev); err != nil {
			return 0, err
		}
	}
	return 0, f.casErr
}

func TestSaveConflictFencesOutStaleWriter(t *testing.T) {
	ctx := context.Background()
	dir, mem := t.TempDir(), NewMemRecorder()
	stale, fresh := newTestStore(t, dir, mem, 3), newTestStore(t, dir, mem, 3)
	for _, s := range []*Store{stale, fresh} {
		if _, _, err := s.Load(ctx); !errors.Is(err, ErrNoCheckpoint) {
			t.Fatalf("initial Load: %v", err)
		}
	}
	won := mustSave(t, fresh, 5)

	if _, err := stale.Save(ctx, testSnapshot(0, 7)); !errors.Is(err, ErrConflict) {
		t.Fatalf("stale Save: err = %v, want ErrConflict", err)
	}
	if _, err := os.Stat(ckptPath(dir, 0, 7)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("fenced-out file still present (stat err %v); Load would prefer it", err)
	}
	if _, err := stale.Save(ctx, testSnapshot(0, 8)); !errors.Is(err, ErrConflict) {
		t.Fatalf("second stale Save: err = %v, want ErrConflict", err)
	}
	snap, report, err := newTestStore(t, dir, mem, 3).Load(ctx)
	if err != nil || snap.Step != 5 || report.Loaded != won {
		t.Fatalf("Load after conflict: step %v report %+v err %v", snap, report, err)
	}

	// Loading again re-arms the stale store on the current record.
	if _, _, err := stale.Load(ctx); err != nil {
		t.Fatal(err)
	}
	mustSave(t, stale, 9)
	if _, err := fresh.Save(ctx, testSnapshot(0, 10)); !errors.Is(err, ErrConflict) {
		t.Fatalf("now-stale fresh store: err = %v, want ErrConflict", err)
	}
}

func TestSaveConflictKeepsFileTheRecordNames(t *testing.T) {
	ctx := context.Background()
	dir, mem := t.TempDir(), NewMemRecorder()
	a, b := newTestStore(t, dir, mem, 3), newTestStore(t, dir, mem, 3)
	a.Load(ctx)
	b.Load(ctx)
	mustSave(t, b, 5)
	// Same step: a's rename replaced b's file before a's CAS failed. The record
	// names that file, so it must stay (it verifies on its own).
	if _, err := a.Save(ctx, testSnapshot(0, 5)); !errors.Is(err, ErrConflict) {
		t.Fatalf("err = %v", err)
	}
	if _, _, err := newTestStore(t, dir, mem, 3).Load(ctx); err != nil {
		t.Fatalf("Load: %v", err)
	}
}

func TestSaveResolvesUnansweredRecordWrite(t *testing.T) {
	lost := errors.New("connection reset")
	for _, tc := range []struct {
		name          string
		applies       bool
		interloper    bool
		wantNextSaveE error
	}{
		{"write landed", true, false, nil},
		{"write did not land", false, false, nil},
		{"someone else wrote meanwhile", false, true, ErrConflict},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			dir, mem := t.TempDir(), NewMemRecorder()
			faulty := &faultyRecorder{Recorder: mem}
			s := newTestStore(t, dir, faulty, 3)
			s.Load(ctx)
			mustSave(t, s, 1)

			faulty.casErr, faulty.casApplies = lost, tc.applies
			_, err := s.Save(ctx, testSnapshot(0, 2))
			if !errors.Is(err, lost) || errors.Is(err, ErrConflict) {
				t.Fatalf("Save with lost reply: err = %v", err)
			}
			if _, err := os.Stat(ckptPath(dir, 0, 2)); err != nil {
				t.Fatalf("file of an unanswered write must stay, it may be recorded: %v", err)
			}
			faulty.casErr = nil
			if tc.interloper {
				other := newTestStore(t, dir, mem, 3)
				other.Load(ctx)
				mustSave(t, other, 3)
			}
			_, err = s.Save(ctx, testSnapshot(0, 4))
			if !errors.Is(err, tc.wantNextSaveE) || (tc.wantNextSaveE == nil && err != nil) {
				t.Fatalf("next Save: err = %v, want %v", err, tc.wantNextSaveE)
			}
		})
	}
}
