package checkpoint

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
)

var errSimulatedCrash = errors.New("simulated crash")

func crashAt(point string) func(string) error {
	return func(p string) error {
		if p == point {
			return errSimulatedCrash
		}
		return nil
	}
}

func TestSavePassesEveryCommitPointInOrder(t *testing.T) {
	s := newTestStore(t, t.TempDir(), NewMemRecorder(), 2)
	var seen []string
	s.crashAt = func(p string) error { seen = append(seen, p); return nil }
	mustSave(t, s, 1)
	want := []string{pointAfterWrite, pointAfterFsync, pointAfterRename, pointAfterRecord, pointAfterDelete}
	if !slices.Equal(seen, want) {
		t.Fatalf("points = %v, want %v", seen, want)
	}
}

// A crash at any commit point leaves a loadable checkpoint: the previous one
// before the new file has its final name, the new one from then on. A new
// Store over the same directory and recorder must load it, and go on saving.
func TestCrashAtEveryCommitPoint(t *testing.T) {
	for _, keep := range []int{1, 2} {
		for _, tc := range []struct {
			point    string
			wantStep int64
			wantTemp bool
		}{
			{pointAfterWrite, 3, true},
			{pointAfterFsync, 3, true},
			{pointAfterRename, 4, false}, // complete and fsynced though not recorded: newest wins
			{pointAfterRecord, 4, false},
			{pointAfterDelete, 4, false},
		} {
			t.Run(fmt.Sprintf("%s/keep=%d", tc.point, keep), func(t *testing.T) {
				ctx := context.Background()
				dir, mem := t.TempDir(), NewMemRecorder()
				s := newTestStore(t, dir, mem, keep)
				for step := int64(1); step <= 3; step++ {
					mustSave(t, s, step)
				}
				s.crashAt = crashAt(tc.point)
				if _, err := s.Save(ctx, testSnapshot(0, 4)); !errors.Is(err, errSimulatedCrash) {
					t.Fatalf("Save: err = %v, want the simulated crash", err)
				}
				if hasTemp := slices.ContainsFunc(ckptFiles(t, dir), func(n string) bool { return isTempFor(n, fileStem(testID, pserverOwner(0))) }); hasTemp != tc.wantTemp {
					t.Fatalf("temp file present = %v, want %v", hasTemp, tc.wantTemp)
				}

				restarted := newTestStore(t, dir, mem, keep)
				snap, report, err := restarted.Load(ctx)
				if err != nil {
					t.Fatalf("Load after crash at %s: %v (report %+v)", tc.point, err, report)
				}
				assertSameSnapshot(t, testSnapshot(0, tc.wantStep), snap)
				if report.FellBack() {
					t.Fatalf("nothing was damaged, yet skipped %+v", report.Skipped)
				}

				// The restarted pserver keeps checkpointing, and the debris of the
				// crashed Save (temp file, surplus files) is gone afterwards.
				next := mustSave(t, restarted, 5)
				wantFiles := []string{pserverFile(0, 5)}
				if keep == 2 {
					wantFiles = []string{pserverFile(0, tc.wantStep), pserverFile(0, 5)}
				}
				if got := ckptFiles(t, dir); !slices.Equal(got, wantFiles) {
					t.Fatalf("files after next Save = %v, want %v", got, wantFiles)
				}
				snap, report, err = newTestStore(t, dir, mem, keep).Load(ctx)
				if err != nil || report.Loaded != next {
					t.Fatalf("Load after next Save: %+v, %v", report, err)
				}
				assertSameSnapshot(t, testSnapshot(0, 5), snap)
			})
		}
	}
}

// A crash between recording a fallback checkpoint and pruning must not let an
// abandoned newer file win the next Load.
func TestSaveAfterFallbackDropsAbandonedNewerFiles(t *testing.T) {
	ctx := context.Background()
	dir, mem := t.TempDir(), NewMemRecorder()
	s := newTestStore(t, dir, mem, 3)
	mustSave(t, s, 10)
	mustSave(t, s, 20)
	flipByte(t, ckptPath(dir, 0, 20), 100)

	restarted := newTestStore(t, dir, mem, 3)
	snap, report, err := restarted.Load(ctx)
	if err != nil || snap.Step != 10 || !report.FellBack() {
		t.Fatalf("fallback Load: step %v report %+v err %v", snap, report, err)
	}
	mustSave(t, restarted, 15)
	want := []string{pserverFile(0, 10), pserverFile(0, 15)}
	if got := ckptFiles(t, dir); !slices.Equal(got, want) {
		t.Fatalf("files = %v, want %v (damaged step 20 removed)", got, want)
	}
}

// A crash at any commit point of a delta's Save leaves a checkpoint whose
// whole chain of bases loads (Keep 1: prune keeps nothing but the newest
// and what it needs); the full base written after the restart lets the
// old chain go.
func TestCrashInADeltaChain(t *testing.T) {
	for _, point := range []string{pointAfterWrite, pointAfterFsync, pointAfterRename, pointAfterRecord, pointAfterDelete} {
		t.Run(point, func(t *testing.T) {
			ctx := context.Background()
			dir, mem := t.TempDir(), NewMemRecorder()
			s := newTestStore(t, dir, mem, 1)
			save := func(s *Store, step, base int64) error {
				snap := testSnapshot(0, step)
				snap.Base = base
				_, err := s.Save(ctx, snap)
				return err
			}
			for step := int64(1); step <= 3; step++ {
				if err := save(s, step, step-1); err != nil {
					t.Fatal(err)
				}
			}
			s.crashAt = crashAt(point)
			if err := save(s, 4, 3); !errors.Is(err, errSimulatedCrash) {
				t.Fatalf("Save: err = %v, want the simulated crash", err)
			}
			restarted := newTestStore(t, dir, mem, 1)
			snap, _, err := restarted.Load(ctx)
			if err != nil {
				t.Fatalf("Load after a crash at %s: %v", point, err)
			}
			for snap.Base != 0 {
				if snap, err = restarted.LoadBase(snap); err != nil {
					t.Fatalf("chain after a crash at %s: %v (files %v)", point, err, ckptFiles(t, dir))
				}
			}
			if snap.Step != 1 {
				t.Fatalf("chain ends at step %d, want the full base 1", snap.Step)
			}
			if err := save(restarted, 5, 0); err != nil {
				t.Fatal(err)
			}
			if got, want := ckptFiles(t, dir), []string{pserverFile(0, 5)}; !slices.Equal(got, want) {
				t.Fatalf("files after a full base = %v, want %v", got, want)
			}
		})
	}
}
