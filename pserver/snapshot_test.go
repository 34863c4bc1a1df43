package pserver

import (
	"errors"
	"testing"

	"github.com/gtrain/gtrain/jobspec"
)

// Each way of replacing the shard's values moves the restore count (a waiting
// pull aborts) and raises the rollback epoch, never lowers it (a restart's
// restore passes 0); pushes of an older rollback epoch are refused.
func TestRestoresCountAndRollbackEpochOnlyRises(t *testing.T) {
	s := testShard(t, jobspec.ModeSync, 1, "sgd")
	one := func(int, int) float32 { return 1 }
	if _, _, err := s.Push(grad(s, 0, 0, 1, one)); err != nil {
		t.Fatal(err)
	}
	s.SnapshotNow()
	snap := writeOut(s, <-s.Snapshots())
	for _, tc := range []struct {
		name          string
		replace       func() error
		wantStep      int64
		rollbackEpoch int64
	}{
		{"Rebase into 2", func() error { s.Rebase(2); return nil }, 1, 2},
		{"Restore at a restart (0)", func() error { return s.Restore(snap.Step, 0, snap.Sections) }, 1, 2},
		{"Reinit into 3", func() error { s.Reinit(3, nil); return nil }, 0, 3},
		{"Restore into 5", func() error { return s.Restore(snap.Step, 5, snap.Sections) }, 1, 5},
	} {
		_, _, restoresBefore := s.Advanced()
		if err := tc.replace(); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		advanced, step, restores := s.Advanced()
		if restores != restoresBefore+1 || step != tc.wantStep || s.RollbackEpoch() != tc.rollbackEpoch {
			t.Fatalf("%s: restores %d (was %d), step %d, rollback epoch %d; want step %d, rollback epoch %d",
				tc.name, restores, restoresBefore, step, s.RollbackEpoch(), tc.wantStep, tc.rollbackEpoch)
		}
		select {
		case <-advanced:
			t.Fatalf("%s: Advanced returned an already closed channel", tc.name)
		default:
		}
	}
	old := grad(s, 0, 1, 1, one)
	old.RollbackEpoch = 4
	if _, _, err := s.Push(old); !errors.Is(err, ErrRolledBack) {
		t.Fatalf("push of rollback epoch 4 into 5: %v, want ErrRolledBack", err)
	}
	current := grad(s, 0, 1, 1, one)
	current.RollbackEpoch = 5
	if applied, _, err := s.Push(current); err != nil || !applied {
		t.Fatalf("push of the current rollback epoch: applied %v, %v", applied, err)
	}
}
