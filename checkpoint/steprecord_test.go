package checkpoint

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// stepRecords is a Config.StepRecord over a map: the sha256 recorded per
// step (the job's checkpoint marks in production).
type stepRecords map[int64]string

func (m stepRecords) lookup(ctx context.Context, step int64) (string, bool, error) {
	sha, ok := m[step]
	return sha, ok, nil
}

func newStrictStore(t *testing.T, dir string, rec Recorder, marks stepRecords) *Store {
	t.Helper()
	s, err := NewStore(Config{Identity: testID, Dir: dir, Keep: 5, Index: 0, StepRecord: marks.lookup}, rec, nil)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// rewrite replaces the file of step with one that decodes (its own
// checksum fits) but holds other values: its sha256 is no longer recorded.
// It is written elsewhere first: a Save prunes the directory it writes in.
func rewrite(t *testing.T, dir string, step int64) {
	t.Helper()
	other := testSnapshot(0, step)
	other.Sections[0].Data[7] += 1
	tmp := t.TempDir()
	rec, err := newTestStore(t, tmp, NewMemRecorder(), 5).Save(context.Background(), other)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(filepath.Join(tmp, rec.File), filepath.Join(dir, rec.File)); err != nil {
		t.Fatal(err)
	}
}

// With step records, Load takes the newest file whose sha256 a record
// holds: an altered recorded file and a file nothing records are skipped,
// naming why, and the next older recorded checkpoint is loaded.
func TestStrictLoadFallsBackToTheNextOlderRecordedCheckpoint(t *testing.T) {
	dir, mem, marks := t.TempDir(), NewMemRecorder(), stepRecords{}
	s := newStrictStore(t, dir, mem, marks)
	for _, step := range []int64{2, 4, 6} {
		marks[step] = mustSave(t, s, step).SHA256
	}
	rewrite(t, dir, 6) // the Recorder's newest, altered
	rewrite(t, dir, 8) // a file nothing records
	snap, report, err := newStrictStore(t, dir, mem, marks).Load(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	assertSameSnapshot(t, testSnapshot(0, 4), snap)
	if len(report.Skipped) != 2 || report.Skipped[0].Step != 8 || report.Skipped[1].Step != 6 {
		t.Fatalf("skipped = %+v, want steps 8 and 6", report.Skipped)
	}
	if sk := report.Skipped[0]; !errors.Is(sk.Err, ErrNotRecorded) || !strings.Contains(sk.Reason, "no record names") {
		t.Fatalf("step 8 skipped as %q, want: no record names it", sk.Reason)
	}
	if sk := report.Skipped[1]; !errors.Is(sk.Err, ErrNotRecorded) || !strings.Contains(sk.Reason, "its record says "+marks[6]) {
		t.Fatalf("step 6 skipped as %q, want: sha256 differs from the record", sk.Reason)
	}
}

// LoadStep holds an older step's file to its step record, and loads no
// file that nothing records, however well it decodes.
func TestStrictLoadStepChecksTheStepRecord(t *testing.T) {
	dir, mem, marks := t.TempDir(), NewMemRecorder(), stepRecords{}
	s := newStrictStore(t, dir, mem, marks)
	for _, step := range []int64{2, 4, 6} {
		marks[step] = mustSave(t, s, step).SHA256
	}
	ctx := context.Background()
	if snap, err := s.LoadStep(ctx, 4); err != nil || snap.Step != 4 {
		t.Fatalf("LoadStep(4) = %v, %v", snap, err)
	}
	rewrite(t, dir, 4)
	if _, err := s.LoadStep(ctx, 4); !errors.Is(err, ErrNotRecorded) || !Unusable(err) {
		t.Fatalf("LoadStep(4) of an altered file = %v, want ErrNotRecorded", err)
	}
	delete(marks, 2)
	if _, err := s.LoadStep(ctx, 2); !errors.Is(err, ErrNotRecorded) {
		t.Fatalf("LoadStep(2) without a record = %v, want ErrNotRecorded", err)
	}
	if _, err := s.LoadStep(ctx, 6); err != nil {
		t.Fatalf("LoadStep(6), the Recorder's newest = %v", err)
	}
}

// A record that cannot be read fails Load: it is no reason to fall back.
func TestStrictLoadRecordErrorIsNotAFallback(t *testing.T) {
	dir, mem := t.TempDir(), NewMemRecorder()
	mustSave(t, newTestStore(t, dir, mem, 5), 2)
	rewrite(t, dir, 4)
	boom := errors.New("etcd unreachable")
	s, err := NewStore(Config{Identity: testID, Dir: dir, Keep: 5, Index: 0,
		StepRecord: func(context.Context, int64) (string, bool, error) { return "", false, boom }}, mem, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, report, err := s.Load(context.Background()); !errors.Is(err, boom) || report.FellBack() {
		t.Fatalf("Load = %v (skipped %+v), want the record's error", err, report.Skipped)
	}
}
