package checkpoint

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
)

func TestSaveLoadRoundTripAndRecord(t *testing.T) {
	dir, mem := t.TempDir(), NewMemRecorder()
	s := newTestStore(t, dir, mem, 3)
	saved := mustSave(t, s, 42)
	if saved.File != "fit-a-line_r42_pserver-0-step-0000000042.ckpt" || saved.Step != 42 || len(saved.SHA256) != 64 {
		t.Fatalf("record = %+v", saved)
	}
	stored, _, found, _ := mem.Load(context.Background(), 0)
	if !found || stored != saved {
		t.Fatalf("recorder holds %+v (found=%v), Save returned %+v", stored, found, saved)
	}
	snap, report, err := newTestStore(t, dir, mem, 3).Load(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	assertSameSnapshot(t, testSnapshot(0, 42), snap)
	if report.Loaded != saved || report.FellBack() || len(report.Warnings) != 0 || !report.RecordFound {
		t.Fatalf("report = %+v", report)
	}
}

func TestSaveKeepsNewestAndDeletesOldestFirst(t *testing.T) {
	dir, mem := t.TempDir(), NewMemRecorder()
	s := newTestStore(t, dir, mem, 2)
	for _, step := range []int64{1, 2, 3, 4} {
		mustSave(t, s, step)
	}
	want := []string{pserverFile(0, 3), pserverFile(0, 4)}
	if got := ckptFiles(t, dir); !slices.Equal(got, want) {
		t.Fatalf("files = %v, want %v", got, want)
	}
}

func TestSaveLeavesOtherIndexesAlone(t *testing.T) {
	dir, mem := t.TempDir(), NewMemRecorder()
	other, err := NewStore(Config{Identity: testID, Dir: dir, Keep: 1, Index: 1}, mem, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := other.Save(context.Background(), testSnapshot(1, 7)); err != nil {
		t.Fatal(err)
	}
	s := newTestStore(t, dir, mem, 1)
	mustSave(t, s, 1)
	mustSave(t, s, 2)
	want := []string{pserverFile(0, 2), pserverFile(1, 7)}
	if got := ckptFiles(t, dir); !slices.Equal(got, want) {
		t.Fatalf("files = %v, want %v", got, want)
	}
}

// The master checkpoints as index 0 like pserver-0; its owner name keeps the
// two apart even in one directory.
func TestOwnersShareADirectory(t *testing.T) {
	ctx, dir := context.Background(), t.TempDir()
	master, err := NewStore(Config{Identity: testID, Dir: dir, Keep: 1, Index: 0, Owner: "master"}, NewMemRecorder(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := master.Load(ctx); !errors.Is(err, ErrNoCheckpoint) {
		t.Fatalf("first Load: %v", err)
	}
	saved, err := master.Save(ctx, testSnapshot(0, 7))
	if err != nil || saved.File != "fit-a-line_r42_master-step-0000000007.ckpt" {
		t.Fatalf("Save = %+v, %v", saved, err)
	}
	ps := newTestStore(t, dir, NewMemRecorder(), 1)
	if _, _, err := ps.Load(ctx); !errors.Is(err, ErrNoCheckpoint) {
		t.Fatalf("pserver-0 Load beside the master's file: %v, want ErrNoCheckpoint", err)
	}
	mustSave(t, ps, 1)
	mustSave(t, ps, 2)
	if got, want := ckptFiles(t, dir), []string{"fit-a-line_r42_master-step-0000000007.ckpt", pserverFile(0, 2)}; !slices.Equal(got, want) {
		t.Fatalf("files = %v, want %v", got, want)
	}
	snap, err := master.LoadStep(ctx, 7)
	if err != nil {
		t.Fatal(err)
	}
	assertSameSnapshot(t, testSnapshot(0, 7), snap)
}

func TestSaveRejectsInvalidSnapshot(t *testing.T) {
	s := newTestStore(t, t.TempDir(), NewMemRecorder(), 1)
	for name, snap := range map[string]Snapshot{
		"other index":   {Index: 1, Step: 1},
		"negative step": {Index: 0, Step: -1},
		"unnamed":       {Index: 0, Step: 1, Sections: []Section{{Data: []float32{1}}}},
		"long name":     {Index: 0, Step: 1, Sections: []Section{{Name: strings.Repeat("x", maxNameLen+1)}}},
	} {
		if _, err := s.Save(context.Background(), snap); !errors.Is(err, ErrInvalidSnapshot) {
			t.Errorf("%s: err = %v, want ErrInvalidSnapshot", name, err)
		}
	}
	if got := ckptFiles(t, s.cfg.Dir); len(got) != 0 {
		t.Fatalf("rejected saves left files: %v", got)
	}
}

func TestSaveCancelledLeavesNoDebris(t *testing.T) {
	dir, mem := t.TempDir(), NewMemRecorder()
	s := newTestStore(t, dir, mem, 1)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := s.Save(ctx, testSnapshot(0, 1)); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v", err)
	}
	if got := ckptFiles(t, dir); len(got) != 0 {
		t.Fatalf("files = %v, want none", got)
	}
}

func TestLoadNothingIsErrNoCheckpoint(t *testing.T) {
	dir := t.TempDir()
	// Files of another index and stray files are not checkpoints of pserver 0.
	for _, name := range []string{pserverFile(1, 5), "notes.txt", "." + pserverFile(0, 5) + ".tmp-1"} {
		if err := os.WriteFile(dir+"/"+name, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	_, report, err := newTestStore(t, dir, NewMemRecorder(), 3).Load(context.Background())
	if !errors.Is(err, ErrNoCheckpoint) || errors.Is(err, ErrCheckpointLost) {
		t.Fatalf("err = %v, want ErrNoCheckpoint", err)
	}
	if len(report.Skipped) != 0 || report.RecordFound {
		t.Fatalf("report = %+v", report)
	}
}

func TestLoadFallsBackFromDamagedNewest(t *testing.T) {
	damage := map[string]func(t *testing.T, path string){
		"flipped byte in data": func(t *testing.T, path string) { flipByte(t, path, 5000) },
		"flipped trailer byte": func(t *testing.T, path string) { flipByte(t, path, -20) },
		"truncated": func(t *testing.T, path string) {
			info, _ := os.Stat(path)
			if err := os.Truncate(path, info.Size()/2); err != nil {
				t.Fatal(err)
			}
		},
		"emptied": func(t *testing.T, path string) {
			if err := os.Truncate(path, 0); err != nil {
				t.Fatal(err)
			}
		},
	}
	for name, spoil := range damage {
		t.Run(name, func(t *testing.T) {
			dir, mem := t.TempDir(), NewMemRecorder()
			s := newTestStore(t, dir, mem, 3)
			mustSave(t, s, 10)
			older := mustSave(t, s, 20)
			newest := mustSave(t, s, 30)
			spoil(t, ckptPath(dir, 0, 30))

			snap, report, err := newTestStore(t, dir, mem, 3).Load(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			assertSameSnapshot(t, testSnapshot(0, 20), snap)
			if report.Loaded != older || report.Recorded != newest {
				t.Fatalf("loaded %+v recorded %+v; want %+v and %+v", report.Loaded, report.Recorded, older, newest)
			}
			if len(report.Skipped) != 1 {
				t.Fatalf("skipped = %+v, want the step-30 file", report.Skipped)
			}
			sk := report.Skipped[0]
			if sk.File != newest.File || sk.Step != 30 || !sk.Recorded || !errors.Is(sk.Err, ErrCorrupt) ||
				!strings.Contains(sk.Reason, newest.File) {
				t.Fatalf("skipped = %+v", sk)
			}
		})
	}
}

func TestLoadRecordedFileDeletedFallsBackToOlder(t *testing.T) {
	dir, mem := t.TempDir(), NewMemRecorder()
	s := newTestStore(t, dir, mem, 3)
	mustSave(t, s, 1)
	newest := mustSave(t, s, 2)
	if err := os.Remove(ckptPath(dir, 0, 2)); err != nil {
		t.Fatal(err)
	}
	snap, report, err := newTestStore(t, dir, mem, 3).Load(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	assertSameSnapshot(t, testSnapshot(0, 1), snap)
	if !report.FellBack() || report.Skipped[0].File != newest.File || !errors.Is(report.Skipped[0].Err, fs.ErrNotExist) {
		t.Fatalf("report = %+v", report)
	}
}

func TestLoadRecordButNoValidFileIsErrCheckpointLost(t *testing.T) {
	for name, spoil := range map[string]func(dir string) error{
		"all deleted": func(dir string) error {
			os.Remove(ckptPath(dir, 0, 1))
			return os.Remove(ckptPath(dir, 0, 2))
		},
		"all damaged": func(dir string) error {
			os.Truncate(ckptPath(dir, 0, 1), 100)
			return os.Truncate(ckptPath(dir, 0, 2), 100)
		},
	} {
		t.Run(name, func(t *testing.T) {
			dir, mem := t.TempDir(), NewMemRecorder()
			s := newTestStore(t, dir, mem, 3)
			mustSave(t, s, 1)
			mustSave(t, s, 2)
			if err := spoil(dir); err != nil {
				t.Fatal(err)
			}
			snap, report, err := newTestStore(t, dir, mem, 3).Load(context.Background())
			if !errors.Is(err, ErrCheckpointLost) || errors.Is(err, ErrNoCheckpoint) || snap != nil {
				t.Fatalf("err = %v, want ErrCheckpointLost", err)
			}
			if !report.RecordFound || report.Recorded.Step != 2 {
				t.Fatalf("report.Recorded = %+v", report.Recorded)
			}
			if name == "all damaged" && len(report.Skipped) != 2 {
				t.Fatalf("skipped = %+v, want both files", report.Skipped)
			}
		})
	}
}

func TestLoadDamagedFilesWithoutRecordIsLostNotNone(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(ckptPath(dir, 0, 3), []byte("garbage"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, report, err := newTestStore(t, dir, NewMemRecorder(), 3).Load(context.Background())
	if !errors.Is(err, ErrCheckpointLost) {
		t.Fatalf("err = %v, want ErrCheckpointLost", err)
	}
	if len(report.Skipped) != 1 || report.Skipped[0].Step != 3 {
		t.Fatalf("skipped = %+v", report.Skipped)
	}
}

func TestLoadRejectsFileWhoseHeaderDisagreesWithItsName(t *testing.T) {
	dir, mem := t.TempDir(), NewMemRecorder()
	s := newTestStore(t, dir, mem, 3)
	mustSave(t, s, 1)
	mustSave(t, s, 2)
	// A valid step-2 file copied under the step-9 name must not pass as step 9.
	b, err := os.ReadFile(ckptPath(dir, 0, 2))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(ckptPath(dir, 0, 9), b, 0o644); err != nil {
		t.Fatal(err)
	}
	snap, report, err := newTestStore(t, dir, mem, 3).Load(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if snap.Step != 2 || len(report.Skipped) != 1 || report.Skipped[0].Step != 9 || !errors.Is(report.Skipped[0].Err, ErrCorrupt) {
		t.Fatalf("loaded step %d, report %+v", snap.Step, report)
	}
}

func TestLoadPrefersNewerUnrecordedValidFile(t *testing.T) {
	dir, mem := t.TempDir(), NewMemRecorder()
	s := newTestStore(t, dir, mem, 3)
	mustSave(t, s, 1)
	// Another store over a fresh recorder writes step 5 to the same directory:
	// a complete, fsynced file the shared recorder never heard of.
	mustSave(t, newTestStore(t, dir, NewMemRecorder(), 3), 5)
	snap, report, err := newTestStore(t, dir, mem, 3).Load(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if snap.Step != 5 || report.Loaded.Step != 5 || report.Recorded.Step != 1 || report.FellBack() {
		t.Fatalf("loaded %d, report %+v", snap.Step, report)
	}
}

func TestLoadSkipsAFileThatDiffersFromItsRecord(t *testing.T) {
	dir, mem := t.TempDir(), NewMemRecorder()
	s := newTestStore(t, dir, mem, 3)
	mustSave(t, s, 2)
	mustSave(t, s, 4)
	// Rewrite step 4 with different content, well-formed with its own
	// checksum, as an edit on disk or a re-save of the same step would.
	other := testSnapshot(0, 4)
	other.Meta = []byte(`{"rewritten":true}`)
	if _, err := newTestStore(t, dir, NewMemRecorder(), 3).Save(context.Background(), other); err != nil {
		t.Fatal(err)
	}
	snap, report, err := newTestStore(t, dir, mem, 3).Load(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	assertSameSnapshot(t, testSnapshot(0, 2), snap)
	if len(report.Skipped) != 1 || !report.Skipped[0].Recorded || !errors.Is(report.Skipped[0].Err, ErrNotRecorded) ||
		!strings.Contains(report.Skipped[0].Reason, "its record says") {
		t.Fatalf("skipped = %+v, want the rewritten step 4, not matching its record", report.Skipped)
	}
	if _, err := newTestStore(t, dir, mem, 3).LoadStep(context.Background(), 4); !errors.Is(err, ErrNotRecorded) {
		t.Fatalf("LoadStep(4) of the rewritten file = %v, want ErrNotRecorded", err)
	}
}

func TestLoadRecorderErrorIsNotNoCheckpoint(t *testing.T) {
	boom := errors.New("etcd unreachable")
	s := newTestStore(t, t.TempDir(), &faultyRecorder{Recorder: NewMemRecorder(), loadErr: boom}, 3)
	_, _, err := s.Load(context.Background())
	if !errors.Is(err, boom) || errors.Is(err, ErrNoCheckpoint) {
		t.Fatalf("err = %v", err)
	}
}

func TestLoadRejectsRecordOfAnotherIndex(t *testing.T) {
	mem := NewMemRecorder()
	// A recorder that files index 1's record under index 0.
	if _, err := mem.CompareAndSwap(context.Background(), Record{Index: 0, Step: 1, File: pserverFile(0, 1)}, 0); err != nil {
		t.Fatal(err)
	}
	mem.records[0] = memEntry{rec: Record{Index: 1, Step: 1, File: pserverFile(1, 1)}, version: mem.records[0].version}
	_, _, err := newTestStore(t, t.TempDir(), mem, 3).Load(context.Background())
	if !errors.Is(err, ErrCorrupt) {
		t.Fatalf("err = %v, want ErrCorrupt", err)
	}
}

func TestLoadRecordNamingNoFileFallsBack(t *testing.T) {
	dir, mem := t.TempDir(), NewMemRecorder()
	s := newTestStore(t, dir, mem, 3)
	v := mustSave(t, s, 1)
	_, version, _, _ := mem.Load(context.Background(), 0)
	if _, err := mem.CompareAndSwap(context.Background(), Record{Index: 0, Step: 2}, version); err != nil {
		t.Fatal(err)
	}
	snap, report, err := newTestStore(t, dir, mem, 3).Load(context.Background())
	if err != nil || snap.Step != 1 || report.Loaded != v {
		t.Fatalf("step %v report %+v err %v", snap, report, err)
	}
	if len(report.Skipped) != 1 || !report.Skipped[0].Recorded || !errors.Is(report.Skipped[0].Err, ErrCorrupt) ||
		!strings.Contains(report.Skipped[0].Reason, "names no file") {
		t.Fatalf("skipped = %+v", report.Skipped)
	}
}

func TestStoreSerialisesConcurrentSaves(t *testing.T) {
	dir, mem := t.TempDir(), NewMemRecorder()
	s := newTestStore(t, dir, mem, 2)
	var wg sync.WaitGroup
	for step := int64(1); step <= 6; step++ {
		wg.Go(func() {
			if _, err := s.Save(context.Background(), testSnapshot(0, step)); err != nil {
				t.Errorf("Save %d: %v", step, err)
			}
		})
	}
	wg.Wait()
	// Saves run one at a time in any order; whichever ran last is recorded,
	// and its prune removed newer files and all but Keep older-or-equal ones.
	snap, report, err := s.Load(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if snap.Step != report.Recorded.Step || report.FellBack() {
		t.Fatalf("loaded step %d, recorded %d, skipped %+v", snap.Step, report.Recorded.Step, report.Skipped)
	}
	if got := ckptFiles(t, dir); len(got) > 2 {
		t.Fatalf("files = %v, want at most Keep=2", got)
	}
}

func TestLoadStepLoadsExactlyThatStep(t *testing.T) {
	dir := t.TempDir()
	rec := NewMemRecorder()
	s, err := NewStore(Config{Identity: testID, Dir: dir, Keep: 3, Index: 1}, rec, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, _, err := s.Load(ctx); !errors.Is(err, ErrNoCheckpoint) {
		t.Fatalf("first load: %v", err)
	}
	for _, step := range []int64{10, 20, 30} {
		if _, err := s.Save(ctx, Snapshot{Index: 1, Step: step, Sections: []Section{{Name: "p", Data: []float32{float32(step)}}}}); err != nil {
			t.Fatal(err)
		}
	}
	snap, err := s.LoadStep(ctx, 20)
	if err != nil || snap.Step != 20 || snap.Sections[0].Data[0] != 20 {
		t.Fatalf("LoadStep(20) = %+v, %v", snap, err)
	}
	if _, err := s.LoadStep(ctx, 25); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("LoadStep of a step never saved: %v, want fs.ErrNotExist", err)
	}
	// Fencing is armed: saving after the rollback works.
	if _, err := s.Save(ctx, Snapshot{Index: 1, Step: 40}); err != nil {
		t.Fatalf("save after LoadStep: %v", err)
	}
}
