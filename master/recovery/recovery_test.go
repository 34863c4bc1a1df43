package recovery

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gtrain/gtrain/coord"
	"github.com/gtrain/gtrain/coord/schema"
	"github.com/gtrain/gtrain/master/core"
)

// kept is a global checkpoint record whose newest step is the last of steps.
func kept(steps ...int64) schema.GlobalCheckpoint {
	if len(steps) == 0 {
		return schema.GlobalCheckpoint{}
	}
	return schema.GlobalCheckpoint{Step: steps[len(steps)-1], Pass: 1, Steps: steps}
}

// checkRolledBack asserts one rollback to step in epoch: the driver at the
// master's checkpoint of step, the pservers restored there, the global
// record without the abandoned steps.
func checkRolledBack(t *testing.T, w *world, step, epoch int64, wantKept []int64) {
	t.Helper()
	if n := len(w.driver.rolledBack); n != 1 {
		t.Fatalf("driver rolled back %d times, want once", n)
	}
	st := w.driver.rolledBack[0]
	if (step == 0) != (st == nil) || st != nil && st.Meta.Step != step {
		t.Fatalf("driver resumed from state %+v, want the master's checkpoint of step %d", st, step)
	}
	if want := []restore{{step, epoch}}; !slices.Equal(w.ps.restores, want) {
		t.Fatalf("pservers restored %v, want %v", w.ps.restores, want)
	}
	if w.driver.Epoch() != epoch {
		t.Fatalf("driver in epoch %d, want %d", w.driver.Epoch(), epoch)
	}
	if len(w.cps.rolled) != 1 || w.cps.rolled[0].Step != step || !slices.Equal(w.cps.rolled[0].Steps, wantKept) {
		t.Fatalf("global record after the rollback %+v, want step %d keeping %v", w.cps.rolled, step, wantKept)
	}
}

// Without any global checkpoint a rollback goes to the start: no master
// state to load, the pservers restored at step 0.
func TestRollbackWithoutCheckpointGoesToTheStart(t *testing.T) {
	w := newWorld(schema.GlobalCheckpoint{}, 7, 0, []int64{7, 5}, []int64{0, 0})
	if err := w.r.rollback(t.Context(), "test", -1); err != nil {
		t.Fatal(err)
	}
	checkRolledBack(t, w, 0, 1, nil)
	if !w.events.has("test", "rolled back to global checkpoint step 0", "epoch 1") {
		t.Fatalf("events %q do not tell the rollback", w.events.what)
	}
}

// A step that is not a complete global checkpoint (the newest is newer, or
// never completed) rolls back to the newest complete one below it.
func TestRollbackToAnIncompleteStepUsesTheNewestCompleteBelow(t *testing.T) {
	w := newWorld(kept(10, 20, 30), 33, 2, []int64{33, 25}, []int64{2, 2})
	w.states.withState(t, 20, 1).withState(t, 30, 1)
	if err := w.r.rollback(t.Context(), "pserver-1 restarted", 25); err != nil {
		t.Fatal(err)
	}
	checkRolledBack(t, w, 20, 3, []int64{10, 20})
	if !w.events.has("step 25 is not a complete global checkpoint", "rolled back to global checkpoint step 20") {
		t.Fatalf("events %q do not say why step 20", w.events.what)
	}
}

// A master checkpoint that cannot be read fails the rollback before any
// pserver is touched: the job stays where it is for a successor to retry.
func TestRollbackWithoutMasterStateLeavesThePserversAlone(t *testing.T) {
	w := newWorld(kept(10, 20), 22, 0, []int64{22, 22}, []int64{0, 0})
	w.states.withState(t, 10, 0) // the master's checkpoint of step 20 is lost
	if err := w.r.rollback(t.Context(), "test", -1); err == nil {
		t.Fatal("rollback without the master's state of step 20 succeeded")
	}
	if len(w.ps.restores) != 0 || len(w.driver.rolledBack) != 0 || len(w.cps.rolled) != 0 {
		t.Fatalf("a failed rollback restored %v, rolled the driver back %d times, rewrote the record %v",
			w.ps.restores, len(w.driver.rolledBack), w.cps.rolled)
	}
}

// A pserver that cannot load its checkpoint of the target (its file no
// longer matches its record) makes the whole job fall back to the previous
// recorded global checkpoint, with an event, in a newer epoch than the
// pservers that the failed attempt restored.
func TestRollbackFallsBackWhenAPserverCheckpointIsUnusable(t *testing.T) {
	w := newWorld(kept(10, 20, 30), 33, 2, []int64{33, 33}, []int64{2, 2})
	w.states.withState(t, 10, 0).withState(t, 20, 1).withState(t, 30, 1)
	w.ps.unusable = map[int64]bool{30: true}
	if err := w.r.rollback(t.Context(), "pserver-0 restarted", 30); err != nil {
		t.Fatal(err)
	}
	if want := []restore{{30, 3}, {20, 4}}; !slices.Equal(w.ps.restores, want) {
		t.Fatalf("pservers restored %v, want %v", w.ps.restores, want)
	}
	if n := len(w.driver.rolledBack); n != 1 || w.driver.rolledBack[0].Meta.Step != 20 || w.driver.Epoch() != 4 {
		t.Fatalf("driver rolled back %d times, to %+v in epoch %d; want once, to step 20 in epoch 4", n, w.driver.rolledBack, w.driver.Epoch())
	}
	if len(w.cps.rolled) != 1 || !slices.Equal(w.cps.rolled[0].Steps, []int64{10, 20}) {
		t.Fatalf("global record after the rollback %+v, want steps [10 20]", w.cps.rolled)
	}
	if !w.events.has("global checkpoint step 30 not restored", "differs from its record", "step 20") ||
		!w.events.has("rolled back to global checkpoint step 20") {
		t.Fatalf("events %q do not tell the fallback", w.events.what)
	}
}

// The new epoch is above any a pserver entered from an interrupted rollback.
func TestRollbackEpochIsAboveEveryPservers(t *testing.T) {
	w := newWorld(kept(10), 12, 2, []int64{12, 10}, []int64{2, 5})
	w.states.withState(t, 10, 0)
	if err := w.r.rollback(t.Context(), "test", -1); err != nil {
		t.Fatal(err)
	}
	checkRolledBack(t, w, 10, 6, []int64{10})
}

// Pservers and master at one step in one epoch: nothing to do.
func TestCheckConsistentAgreeing(t *testing.T) {
	w := newWorld(kept(10), 12, 1, []int64{12, 12}, []int64{1, 1})
	if err := w.r.checkConsistent(t.Context()); err != nil {
		t.Fatal(err)
	}
	if len(w.driver.rolledBack) != 0 || w.driver.caughtUp >= 0 {
		t.Fatalf("agreeing pservers: %d rollbacks, caught up to %d; want neither", len(w.driver.rolledBack), w.driver.caughtUp)
	}
}

// Pservers past the stored state (a failover: commits are saved in the
// background) are caught up with from the plan, not rolled back.
func TestCheckConsistentCatchesUpWithPserversAhead(t *testing.T) {
	w := newWorld(kept(10), 12, 1, []int64{14, 14}, []int64{1, 1})
	if err := w.r.checkConsistent(t.Context()); err != nil {
		t.Fatal(err)
	}
	if w.driver.caughtUp != 14 || len(w.driver.rolledBack) != 0 {
		t.Fatalf("caught up to %d with %d rollbacks; want step 14, none", w.driver.caughtUp, len(w.driver.rolledBack))
	}
	if !w.events.has("caught up from step 12 to step 14") {
		t.Fatalf("events %q do not tell the catch-up", w.events.what)
	}
}

// A catch-up the plan cannot make rolls back to the newest complete global
// checkpoint at or below the pservers' step.
func TestCheckConsistentRollsBackWhenTheCatchUpFails(t *testing.T) {
	w := newWorld(kept(10, 13), 12, 1, []int64{14, 14}, []int64{1, 1})
	w.states.withState(t, 13, 0)
	w.driver.catchUpErr = fmt.Errorf("step 14: %w", core.ErrBadStep)
	if err := w.r.checkConsistent(t.Context()); err != nil {
		t.Fatal(err)
	}
	checkRolledBack(t, w, 13, 2, []int64{10, 13})
}

// Pservers that disagree (everything restarted, each from its own newest
// checkpoint) roll back to the newest global checkpoint at or below the
// lowest of them.
func TestCheckConsistentRollsBackDisagreeingPservers(t *testing.T) {
	w := newWorld(kept(10, 20, 30), 30, 1, []int64{30, 24, 30}, []int64{1, 1, 1})
	w.states.withState(t, 20, 0)
	if err := w.r.checkConsistent(t.Context()); err != nil {
		t.Fatal(err)
	}
	checkRolledBack(t, w, 20, 2, []int64{10, 20})
	if !w.events.has("pservers at steps [30 24 30]", "step 24 is not a complete global checkpoint") {
		t.Fatalf("events %q do not say why", w.events.what)
	}
}

// A pserver in a newer epoch than the master (a rollback cut short) rolls
// the job back to the newest global checkpoint; a pserver that does not
// answer rolls nothing back (its return triggers its own rollback).
func TestCheckEpochs(t *testing.T) {
	w := newWorld(kept(10), 11, 1, []int64{10, 11}, []int64{1, 1})
	w.ps.stepsErr = errors.New("pserver-1 unavailable")
	if err := w.r.CheckEpochs(t.Context(), time.Second); err != nil || len(w.driver.rolledBack) != 0 {
		t.Fatalf("unanswered probe: err %v, %d rollbacks; want nil, none", err, len(w.driver.rolledBack))
	}
	w.ps.stepsErr = nil
	if err := w.r.CheckEpochs(t.Context(), time.Second); err != nil || len(w.driver.rolledBack) != 0 {
		t.Fatalf("same epochs: err %v, %d rollbacks; want nil, none", err, len(w.driver.rolledBack))
	}
	w.ps.epochs[0] = 2 // restored by a master that died before the others
	w.states.withState(t, 10, 0)
	if err := w.r.CheckEpochs(t.Context(), time.Second); err != nil {
		t.Fatal(err)
	}
	checkRolledBack(t, w, 10, 3, []int64{10})
	if !w.events.has("pserver-0 is in epoch 2, the master in 1") {
		t.Fatalf("events %q do not say why", w.events.what)
	}
}

// A finished job is not rolled back, even with a pserver in a newer epoch
// (a rollback cut short as the job ended): its pservers are left alone, so
// that the master's successors do not restore them again and again, each
// in a newer epoch, and each then fail on the core's ErrJobDone.
func TestCheckEpochsLeavesAFinishedJobAlone(t *testing.T) {
	w := newWorld(kept(10), 11, 1, []int64{11, 11}, []int64{2, 2})
	w.states.withState(t, 10, 0)
	w.driver.done = true
	if err := w.r.CheckEpochs(t.Context(), time.Second); err != nil {
		t.Fatal(err)
	}
	if len(w.driver.rolledBack) != 0 || len(w.ps.restores) != 0 {
		t.Fatalf("finished job: %d rollbacks, pservers restored %v; want none", len(w.driver.rolledBack), w.ps.restores)
	}
}

// A trainer's request is void when a rollback happened since its epoch.
func TestRequestRollbackOfAnOlderEpochIsAnswered(t *testing.T) {
	w := newWorld(kept(10), 11, 3, []int64{11, 11}, []int64{3, 3})
	w.states.withState(t, 10, 0)
	if err := w.r.RequestRollback(t.Context(), 2, "trainer saw pservers split"); err != nil || len(w.driver.rolledBack) != 0 {
		t.Fatalf("request of epoch 2 in epoch 3: err %v, %d rollbacks; want nil, none", err, len(w.driver.rolledBack))
	}
	if err := w.r.RequestRollback(t.Context(), 3, "trainer saw pservers split"); err != nil {
		t.Fatal(err)
	}
	checkRolledBack(t, w, 10, 4, []int64{10})
}

// A step becomes the global checkpoint once the master and every pserver
// of the layout in use marked it, keeping the keep (3) newest; a pserver
// beyond the count (left by a re-shard down) does not complete a step.
func TestMaybeDeclare(t *testing.T) {
	w := newWorld(kept(10, 20, 30), 33, 0, []int64{33, 33}, []int64{0, 0})
	w.cps.marks[40] = []string{coord.MasterMark, "pserver-0", "pserver-2"}
	if err := w.r.maybeDeclare(t.Context(), 40); err != nil || len(w.cps.declared) != 0 {
		t.Fatalf("step 40 without pserver-1's mark: err %v, declared %v; want none", err, w.cps.declared)
	}
	w.cps.marks[40] = append(w.cps.marks[40], "pserver-1")
	if err := w.r.maybeDeclare(t.Context(), 40); err != nil {
		t.Fatal(err)
	}
	if len(w.cps.declared) != 1 || w.cps.declared[0].Step != 40 || !slices.Equal(w.cps.declared[0].Steps, []int64{20, 30, 40}) {
		t.Fatalf("declared %+v, want step 40 keeping [20 30 40]", w.cps.declared)
	}
	w.cps.marks[35] = []string{coord.MasterMark, "pserver-0", "pserver-1"}
	if err := w.r.maybeDeclare(t.Context(), 35); err != nil || len(w.cps.declared) != 1 {
		t.Fatalf("step 35 after 40: err %v, declared %v; want no new record", err, w.cps.declared)
	}
}

// A pserver registering anew (another lease) rolls the job back to where it
// restored; the incarnation already seen, one not ready and one of another
// layout generation do not.
func TestWatchPserversRollsBackOnANewIncarnation(t *testing.T) {
	w := newWorld(kept(10, 20), 25, 0, []int64{25, 25}, []int64{0, 0})
	w.states.withState(t, 10, 0).withState(t, 20, 1)
	ready := func(i int, lease, gen, restored int64) Registration {
		return Registration{PserverRecord: schema.PserverRecord{Index: i, Ready: true, Generation: gen, RestoredStep: restored, PID: 100 + i}, Lease: lease}
	}
	w.ps.regs = []Registration{ready(0, 1, 0, 0), ready(1, 2, 0, 0)}
	rev, err := w.r.readyLeases(t.Context())
	if err != nil || rev != 100 {
		t.Fatalf("readyLeases: %d, %v", rev, err)
	}
	notReady := ready(1, 5, 0, 10)
	notReady.Ready = false
	w.ps.watched = []Registration{ready(0, 1, 0, 0), notReady, ready(1, 6, 1, 10), ready(1, 7, 0, 20)}
	if err := w.r.watchPservers(t.Context(), rev); err == nil {
		t.Fatal("the watch ended without an error")
	}
	checkRolledBack(t, w, 20, 1, []int64{10, 20})
	if !w.events.has("pserver-1 restarted (pid 101)") {
		t.Fatalf("events %q do not name the restarted pserver", w.events.what)
	}
}

// A re-shard: the next step is flagged for a checkpoint, the layout
// committed from the newest global checkpoint, the job rolled back there in
// a new epoch, the pause recorded once a step under the new layout commits.
func TestReshardMovesTheJobToTheRequestedCount(t *testing.T) {
	w := newWorld(kept(10, 20), 18, 0, []int64{18, 18}, []int64{0, 0})
	w.states.withState(t, 20, 1)
	w.layouts.req = schema.ReshardRequest{Pservers: 3}
	w.driver.advance = 1 // the first step of the new layout commits at once
	if err := w.r.reshardOnce(t.Context()); err != nil {
		t.Fatal(err)
	}
	if w.driver.checkpoints == 0 {
		t.Fatal("the re-shard did not ask for a checkpoint")
	}
	want := schema.LayoutRecord{Generation: 1, Pservers: 3, FromStep: 20, SourcePservers: 2}
	if len(w.layouts.commits) != 1 || !sameLayout(w.layouts.commits[0], want) {
		t.Fatalf("committed %+v, want %+v", w.layouts.commits, want)
	}
	if want := []restore{{20, 1}}; !slices.Equal(w.ps.restores, want) || w.ps.Servers() != 3 || w.ps.Generation() != 1 {
		t.Fatalf("pservers: restored %v, %d of generation %d; want %v, 3 of generation 1", w.ps.restores, w.ps.Servers(), w.ps.Generation(), want)
	}
	if len(w.layouts.finished) != 1 || w.layouts.finished[0].PauseMs < 1 || w.layouts.finished[0].Resharding() {
		t.Fatalf("finished %+v, want the layout with its pause", w.layouts.finished)
	}
	// The event goes with the finished layout, in one commit.
	if len(w.layouts.finishEvents) != 1 || !strings.Contains(w.layouts.finishEvents[0], "pservers re-sharded from 2 to 3 at global checkpoint step 20 (layout generation 1): training paused") {
		t.Fatalf("finished with events %q, want one telling the re-shard and its pause", w.layouts.finishEvents)
	}
}

func sameLayout(a, b schema.LayoutRecord) bool {
	a.Paused, b.Paused = time.Time{}, time.Time{}
	return a == b
}

// No request, the count in use, or a finished job: nothing happens.
func TestReshardOnceWithoutWork(t *testing.T) {
	for _, tc := range []struct {
		name string
		req  int
		done bool
	}{{"no request", 0, false}, {"the count in use", 2, false}, {"job done", 3, true}} {
		w := newWorld(kept(10), 12, 0, []int64{12, 12}, []int64{0, 0})
		w.layouts.req, w.driver.done = schema.ReshardRequest{Pservers: tc.req}, tc.done
		if err := w.r.reshardOnce(t.Context()); err != nil || len(w.layouts.commits) != 0 || w.driver.paused != 0 {
			t.Errorf("%s: err %v, commits %v, paused %d; want nothing", tc.name, err, w.layouts.commits, w.driver.paused)
		}
	}
}

// A job record changed under the commit (a trainer scale) is read again and
// the commit retried.
func TestReshardRetriesAMovedJobRecord(t *testing.T) {
	w := newWorld(kept(20), 18, 0, []int64{18, 18}, []int64{0, 0})
	w.states.withState(t, 20, 1)
	w.layouts.req, w.layouts.moved, w.driver.advance = schema.ReshardRequest{Pservers: 1}, 1, 1
	if err := w.r.reshardOnce(t.Context()); err != nil {
		t.Fatal(err)
	}
	if len(w.layouts.commits) != 2 || w.layouts.layout.Generation != 1 || w.layouts.layout.Pservers != 1 {
		t.Fatalf("commits %+v, layout %+v; want a retried commit of generation 1 with 1 pserver", w.layouts.commits, w.layouts.layout)
	}
}

// A job evaluating its last pass gives the re-shard up before committing.
func TestReshardGivenUpWhenTheJobIsFinishing(t *testing.T) {
	w := newWorld(kept(20), 18, 0, []int64{18, 18}, []int64{0, 0})
	w.layouts.req, w.driver.finishing = schema.ReshardRequest{Pservers: 3}, true
	if err := w.r.reshardOnce(t.Context()); !errors.Is(err, errReshardAbandoned) {
		t.Fatalf("err %v, want errReshardAbandoned", err)
	}
	if len(w.layouts.commits) != 0 || len(w.ps.restores) != 0 {
		t.Fatalf("commits %v, restores %v; want none", w.layouts.commits, w.ps.restores)
	}
}

// The re-shard waits until a global checkpoint newer than the job's step is
// declared; a job that ends meanwhile abandons it.
func TestReshardWaitsForANewGlobalCheckpoint(t *testing.T) {
	w := newWorld(kept(10), 12, 0, []int64{12, 12}, []int64{0, 0})
	waited := make(chan error, 1)
	go func() { waited <- w.r.waitGlobalCheckpoint(t.Context()) }()
	select {
	case err := <-waited:
		t.Fatalf("returned (%v) before a newer global checkpoint", err)
	case <-time.After(50 * time.Millisecond):
	}
	w.cps.set(kept(10, 14))
	select {
	case err := <-waited:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(reshardPoll + time.Second):
		t.Fatal("the declaration of step 14 did not end the wait")
	}

	w = newWorld(kept(10), 12, 0, []int64{12, 12}, []int64{0, 0})
	w.driver.done = true
	ctx, cancel := context.WithTimeout(t.Context(), time.Second)
	defer cancel()
	if err := w.r.waitGlobalCheckpoint(ctx); !errors.Is(err, errReshardAbandoned) {
		t.Fatalf("a done job: %v, want errReshardAbandoned", err)
	}
}

// A master that died after committing a layout leaves it under way: its
// successor rolls back to the layout's step in a new epoch (the trainers'
// reports of the old layout are void), then records the pause.
func TestReshardInterruptedMidwayIsFinishedBySuccessor(t *testing.T) {
	layout := schema.LayoutRecord{Generation: 2, Pservers: 3, FromStep: 20, SourcePservers: 2, Paused: time.Now().Add(-time.Second)}
	w := newWorld(kept(20), 21, 4, []int64{20, 20, 20}, []int64{4, 4, 4})
	w.states.withState(t, 20, 1)
	w.layouts.layout, w.layouts.req, w.ps.gen = layout, schema.ReshardRequest{Pservers: 3}, 2
	w.driver.advance = 1
	if err := w.r.rollbackIfResharding(t.Context()); err != nil {
		t.Fatal(err)
	}
	checkRolledBack(t, w, 20, 5, []int64{20})
	if !w.events.has("a re-shard to 3 pservers (layout generation 2) was under way") {
		t.Fatalf("events %q do not say why", w.events.what)
	}
	if err := w.r.reshardOnce(t.Context()); err != nil {
		t.Fatal(err)
	}
	if len(w.layouts.commits) != 0 || len(w.layouts.finished) != 1 || w.layouts.finished[0].PauseMs < 1000 {
		t.Fatalf("commits %v, finished %+v; want no new generation, the pause measured from the recorded time", w.layouts.commits, w.layouts.finished)
	}

	w.layouts.layout.PauseMs = 0
	w.layouts.layout.Generation = 0 // never re-sharded
	w.driver.rolledBack = nil
	if err := w.r.rollbackIfResharding(t.Context()); err != nil || len(w.driver.rolledBack) != 0 {
		t.Fatalf("generation 0: err %v, %d rollbacks; want none", err, len(w.driver.rolledBack))
	}
}

// After a re-shard's own rollback the new pservers' registrations are not
// taken for restarts.
func TestReshardAdoptsTheNewIncarnations(t *testing.T) {
	w := newWorld(kept(20), 18, 0, []int64{18, 18}, []int64{0, 0})
	w.states.withState(t, 20, 1)
	w.layouts.req, w.driver.advance = schema.ReshardRequest{Pservers: 1}, 1
	w.ps.regs = []Registration{{PserverRecord: schema.PserverRecord{Index: 0, Ready: true, Generation: 1, RestoredStep: 20}, Lease: 9}}
	if err := w.r.reshardOnce(t.Context()); err != nil {
		t.Fatal(err)
	}
	if w.r.knownIncarnation(w.ps.regs[0]) != true {
		t.Fatal("the re-shard's own pserver is taken for a restart")
	}
}
