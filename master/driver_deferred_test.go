package master

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/gtrain/gtrain/internal/testing/wait"
	"github.com/gtrain/gtrain/master/core"
)

// A sync step commit is not waited for: while a save hangs, steps go on
// being reported, committed and handed out; the background save catches
// them up once the store answers; and a master whose Run ended
// acknowledges no more reports.
func TestDriverSyncStepCommitsAreSavedInTheBackground(t *testing.T) {
	store := newGatedStore()
	ctx, stop := context.WithCancel(t.Context())
	c := mustDriver(t, ctx, core.FixtureSyncConfig(2, 4, 1), core.FixtureTaskSet(), store, &fakeEvaluator{}, newFakeClock())
	store.arm() // the next save hangs until released
	done := make(chan struct{})
	go func() {
		defer close(done)
		runSyncSteps(t, c, 0, 1) // committed: the background save of it hangs
		<-store.entered
		runSyncSteps(t, c, 1, 3) // reported while the save hangs
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("step reports waited for a save")
	}
	if m := metaOf(c); m.Step != 3 {
		t.Fatalf("master at step %d, want 3", m.Step)
	}
	store.release()
	wait.Eventually(t, 5*time.Second, "the background save of step 3", func() (bool, string) {
		m, _ := storedState(t, store.MemStore)
		return m != nil && m.Step == 3, fmt.Sprintf("stored %+v", m)
	})
	stop()
	wait.Eventually(t, 5*time.Second, "Run to end", func() (bool, string) {
		err := c.StepDone(context.Background(), 0, 0, 3, epoch0, 0, 4)
		return errors.Is(err, ErrStopped), fmt.Sprintf("StepDone: %v", err)
	})
}
