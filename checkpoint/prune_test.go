package checkpoint

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestDoomedFilesKeepsPinnedSteps(t *testing.T) {
	var files []stepFile
	for _, step := range []int64{100, 200, 300, 400, 500, 600, 700, 800} {
		files = append(files, stepFile{pserverFile(0, step), step})
	}
	rec := Record{Step: 700, File: pserverFile(0, 700)}
	steps := func(fs []stepFile) (out []int64) {
		for _, f := range fs {
			out = append(out, f.step)
		}
		return out
	}
	cases := []struct {
		name   string
		pinned []int64
		want   []int64
	}{
		{"own newest only", nil, []int64{100, 200, 300, 400, 800}},
		{"kept global checkpoints survive", []int64{200, 300}, []int64{100, 400, 800}},
		{"a pinned step newer than rec survives", []int64{800}, []int64{100, 200, 300, 400}},
	}
	for _, c := range cases {
		if got := steps(doomedFiles(files, rec, 3, c.pinned)); !slices.Equal(got, c.want) {
			t.Errorf("%s: doomed %v, want %v", c.name, got, c.want)
		}
	}
}

// TestPruneKeepsGlobalCheckpointsWhileAnotherOwnerFails: pserver-1 cannot
// write step 400 on (a directory holds its file's name); pserver-0 goes on to
// step 700. The job's newest complete global checkpoint is 300, so pserver-0
// must keep its files of the kept global steps, or the rollback finds nothing.
func TestPruneKeepsGlobalCheckpointsWhileAnotherOwnerFails(t *testing.T) {
	dir := t.TempDir()
	rec := NewMemRecorder()
	global := []int64{100, 200, 300}
	stores := make([]*Store, 2)
	for i := range stores {
		s, err := NewStore(Config{Identity: testID, Dir: dir, Keep: 2, Index: i,
			KeepSteps: func(context.Context) ([]int64, error) { return global, nil }}, rec, nil)
		if err != nil {
			t.Fatal(err)
		}
		stores[i] = s
	}
	for _, step := range global {
		mustSave(t, stores[0], step)
		mustSave(t, stores[1], step)
	}
	blocker := ckptPath(dir, 1, 400)
	if err := os.MkdirAll(filepath.Join(blocker, "full"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := stores[1].Save(context.Background(), testSnapshot(1, 400)); err == nil {
		t.Fatal("Save over a directory succeeded")
	}
	for _, step := range []int64{400, 500, 600, 700} {
		mustSave(t, stores[0], step)
	}
	for _, step := range global {
		snap, err := stores[0].LoadStep(context.Background(), step)
		if err != nil {
			t.Fatalf("pserver-0 lost kept global checkpoint step %d: %v (files %v)", step, err, ckptFiles(t, dir))
		}
		assertSameSnapshot(t, testSnapshot(0, step), snap)
	}
	if _, err := os.Stat(ckptPath(dir, 0, 500)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("pserver-0 step 500 (neither global nor among the 2 newest) was kept: %v", err)
	}
	if _, err := os.Stat(blocker); err != nil {
		t.Errorf("the blocking directory went away: %v", err)
	}
}

func TestPruneDeletesNothingWhenKeptStepsAreUnknown(t *testing.T) {
	dir := t.TempDir()
	s, err := NewStore(Config{Identity: testID, Dir: dir, Keep: 1, Index: 0,
		KeepSteps: func(context.Context) ([]int64, error) { return nil, errors.New("etcd unreachable") }}, NewMemRecorder(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, step := range []int64{100, 200, 300} {
		mustSave(t, s, step)
	}
	if got := ckptFiles(t, dir); len(got) != 3 {
		t.Errorf("files %v, want all 3 kept while the kept steps are unknown", got)
	}
}

// TestPruneKeepsTheBasesKeptDeltasNeed: with Keep 2, a chain of deltas
// (each on the previous file) keeps every file down to its full base
// however old, and a new full base lets the old chain go.
func TestPruneKeepsTheBasesKeptDeltasNeed(t *testing.T) {
	dir := t.TempDir()
	s := newTestStore(t, dir, NewMemRecorder(), 2)
	save := func(step, base int64) {
		t.Helper()
		snap := testSnapshot(0, step)
		snap.Base = base
		if _, err := s.Save(context.Background(), snap); err != nil {
			t.Fatal(err)
		}
	}
	save(100, 0)
	save(200, 100)
	save(300, 200)
	save(400, 300)
	if got := ckptFiles(t, dir); len(got) != 4 {
		t.Fatalf("files %v, want the chain 100-400 kept (400 needs every one)", got)
	}
	for _, step := range []int64{100, 400} {
		snap, err := s.LoadStep(context.Background(), step)
		if err != nil {
			t.Fatal(err)
		}
		for snap.Base != 0 {
			if snap, err = s.LoadBase(snap); err != nil {
				t.Fatalf("the chain of step %d: %v", step, err)
			}
		}
		if snap.Step != 100 {
			t.Errorf("the chain of step %d ends at step %d, want 100", step, snap.Step)
		}
	}
	save(500, 0)
	save(600, 500)
	if got := ckptFiles(t, dir); len(got) != 2 {
		t.Errorf("files %v, want only 500 and 600 once a new base is kept", got)
	}
}

// TestLoadBaseHoldsTheBaseToItsSHA: a base replaced on disk by another
// valid file of its step is not loaded as the delta's base.
func TestLoadBaseHoldsTheBaseToItsSHA(t *testing.T) {
	ctx := context.Background()
	dir, other := t.TempDir(), t.TempDir()
	s := newTestStore(t, dir, NewMemRecorder(), 3)
	mustSave(t, s, 1)
	delta := testSnapshot(0, 2)
	delta.Base = 1
	if _, err := s.Save(ctx, delta); err != nil {
		t.Fatal(err)
	}
	snap, err := s.LoadStep(ctx, 2)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.LoadBase(snap); err != nil {
		t.Fatalf("LoadBase of an intact base: %v", err)
	}
	swapped := testSnapshot(0, 1)
	swapped.Meta = []byte(`{"another":"file"}`)
	if _, err := newTestStore(t, other, NewMemRecorder(), 3).Save(ctx, swapped); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(ckptPath(other, 0, 1))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(ckptPath(dir, 0, 1), raw, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := s.LoadBase(snap); !errors.Is(err, ErrNotRecorded) {
		t.Fatalf("LoadBase of a swapped base: err %v, want ErrNotRecorded", err)
	}
}
