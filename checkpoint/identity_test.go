package checkpoint

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// storeOf is a store of pserver 0 of job id in dir, with its own recorder:
// each job has its records under its own etcd prefix.
func storeOf(t *testing.T, id Identity, dir string, keep int) *Store {
	t.Helper()
	s, err := NewStore(Config{Identity: id, Dir: dir, Keep: keep}, NewMemRecorder(), nil)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func saveAs(t *testing.T, s *Store, step int64) Record {
	t.Helper()
	snap := testSnapshot(0, step)
	snap.Identity = s.cfg.Identity
	rec, err := s.Save(context.Background(), snap)
	if err != nil {
		t.Fatalf("Save step %d of %s: %v", step, s.cfg.Identity, err)
	}
	return rec
}

func loadedStep(t *testing.T, s *Store) int64 {
	t.Helper()
	snap, report, err := s.Load(context.Background())
	if err != nil {
		t.Fatalf("Load of %s: %v", s.cfg.Identity, err)
	}
	if report.FellBack() || snap.Identity != s.cfg.Identity {
		t.Fatalf("Load of %s: snapshot of %s, skipped %+v", s.cfg.Identity, snap.Identity, report.Skipped)
	}
	return snap.Step
}

// Two jobs sharing a checkpoint directory, and a job name reused after a
// purge, each load and prune only their own files, although every one of
// them is pserver-0 and the others' steps are newer.
func TestIdentitiesShareADirectory(t *testing.T) {
	dir := t.TempDir()
	a := storeOf(t, Identity{Job: "a", Rev: 7}, dir, 2)
	b := storeOf(t, Identity{Job: "b", Rev: 9}, dir, 1)
	reused := storeOf(t, Identity{Job: "a", Rev: 12}, dir, 1)
	saveAs(t, b, 50)
	saveAs(t, reused, 40)
	for step := int64(1); step <= 4; step++ {
		saveAs(t, a, step)
	}
	saveAs(t, b, 60)
	for _, tc := range []struct {
		s    *Store
		want int64
	}{{a, 4}, {b, 60}, {reused, 40}} {
		// A fresh store, as a restarted pserver opens it.
		fresh := storeOf(t, tc.s.cfg.Identity, dir, tc.s.cfg.Keep)
		fresh.rec = tc.s.rec
		if got := loadedStep(t, fresh); got != tc.want {
			t.Errorf("%s loaded step %d, want %d", tc.s.cfg.Identity, got, tc.want)
		}
	}
	want := []string{"a_r12_pserver-0-step-0000000040.ckpt", "a_r7_pserver-0-step-0000000003.ckpt",
		"a_r7_pserver-0-step-0000000004.ckpt", "b_r9_pserver-0-step-0000000060.ckpt"}
	if got := ckptFiles(t, dir); !slices.Equal(got, want) {
		t.Fatalf("files = %v, want %v: each job pruned only its own", got, want)
	}
	// LoadStep does not reach into another job's files either.
	if _, err := b.LoadStep(context.Background(), 4); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("job b LoadStep(4), a step only job a has: %v, want not found", err)
	}
}

// Files of an older job of the same name (same owner, same name pattern, a
// lower revision) are neither loaded nor pruned by the new job.
func TestOldIdentityFilesAreIgnored(t *testing.T) {
	dir := t.TempDir()
	old := storeOf(t, Identity{Job: "fit", Rev: 3}, dir, 5)
	for step := int64(10); step <= 30; step += 10 {
		saveAs(t, old, step)
	}
	oldFiles := ckptFiles(t, dir)

	purgedAndReused := storeOf(t, Identity{Job: "fit", Rev: 8}, dir, 1)
	if _, _, err := purgedAndReused.Load(context.Background()); !errors.Is(err, ErrNoCheckpoint) {
		t.Fatalf("Load of the new job beside the old job's files: %v, want ErrNoCheckpoint", err)
	}
	saveAs(t, purgedAndReused, 1)
	saveAs(t, purgedAndReused, 2)
	got := ckptFiles(t, dir)
	want := append(slices.Clone(oldFiles), "fit_r8_pserver-0-step-0000000002.ckpt")
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("files = %v, want the old job's untouched plus the new job's newest: %v", got, want)
	}
	if step := loadedStep(t, purgedAndReused); step != 2 {
		t.Fatalf("new job loaded step %d, want 2", step)
	}
}

// A file whose header names another job than its file name is damaged: it
// is skipped (falling back to an older file of the right job), and alone it
// is a lost checkpoint, never silently loaded.
func TestHeaderIdentityMustMatchName(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	other := storeOf(t, Identity{Job: "fit", Rev: 3}, dir, 5)
	stolen := saveAs(t, other, 20)

	s := storeOf(t, Identity{Job: "fit", Rev: 8}, dir, 5)
	// The older job's valid file, copied under the new job's name of step 20.
	copyFile(t, filepath.Join(dir, stolen.File), filepath.Join(dir, "fit_r8_pserver-0-step-0000000020.ckpt"))
	_, report, err := s.Load(ctx)
	if !errors.Is(err, ErrCheckpointLost) || len(report.Skipped) != 1 || !errors.Is(report.Skipped[0].Err, ErrCorrupt) ||
		!strings.Contains(report.Skipped[0].Reason, "belongs to job fit (rev 3)") {
		t.Fatalf("Load = %v, report %+v; want the file rejected as damaged", err, report)
	}
	if _, err := s.LoadStep(ctx, 20); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("LoadStep(20) = %v, want ErrCorrupt", err)
	}

	// Beside a good older file of the right job, the foreign one is skipped.
	dir2 := t.TempDir()
	s2 := storeOf(t, s.cfg.Identity, dir2, 5)
	saveAs(t, s2, 10)
	copyFile(t, filepath.Join(dir, stolen.File), filepath.Join(dir2, "fit_r8_pserver-0-step-0000000020.ckpt"))
	snap, report, err := storeOf(t, s.cfg.Identity, dir2, 5).Load(ctx)
	if err != nil || snap.Step != 10 || len(report.Skipped) != 1 || report.Skipped[0].Step != 20 {
		t.Fatalf("Load = %v, skipped %+v; want step 10 after skipping the foreign step 20", err, report.Skipped)
	}
}

func TestSaveRejectsSnapshotOfAnotherJob(t *testing.T) {
	s := storeOf(t, Identity{Job: "fit", Rev: 8}, t.TempDir(), 1)
	snap := testSnapshot(0, 1)
	snap.Identity = Identity{Job: "fit", Rev: 3}
	if _, err := s.Save(context.Background(), snap); !errors.Is(err, ErrInvalidSnapshot) {
		t.Fatalf("Save of another job's snapshot: %v, want ErrInvalidSnapshot", err)
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// FileName is the name Save gives the file.
func TestFileNameIsWhatSaveWrites(t *testing.T) {
	id := Identity{Job: "fit.v2", Rev: 31}
	rec := saveAs(t, storeOf(t, id, t.TempDir(), 1), 200)
	if got := FileName(id, "pserver-0", 200); got != rec.File || got != "fit.v2_r31_pserver-0-step-0000000200.ckpt" {
		t.Fatalf("FileName = %q, Save wrote %q", got, rec.File)
	}
}
