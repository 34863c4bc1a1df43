package master

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/gtrain/gtrain/coord/schema"
	"github.com/gtrain/gtrain/master/core"
)

// stalledStore persists through the real store until stalled; from then on
// a save writes nothing and waits for the master's end: the master is
// killed between two background saves, with step commits only in memory.
type stalledStore struct {
	Store
	mu      sync.Mutex
	stalled bool
}

func (s *stalledStore) Save(ctx context.Context, meta core.Meta, changed []core.TaskStatus, progress *schema.ProgressRecord) error {
	s.mu.Lock()
	stalled := s.stalled
	s.mu.Unlock()
	if stalled {
		<-ctx.Done()
		return ctx.Err()
	}
	return s.Store.Save(ctx, meta, changed, progress)
}

func (s *stalledStore) stall() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stalled = true
}

// A sync master killed between saves: its successor restores the last saved
// state from etcd and commits, from the plan, the steps the pservers applied
// since (CatchUp); samples_applied is exact for every pass, no record is
// computed twice, re-sent reports of recovered steps count nothing, and the
// train loss is the mean over the reports that survived. With the pservers
// at the pass's end, the catch-up ends the pass too.
func TestSyncMasterKilledBetweenSavesCatchesUp(t *testing.T) {
	cli := dialTest(t, startTestEtcd(t))
	ts := core.FixtureTaskSet() // 42 records: 4 steps of 12 per pass with 3 trainers of 4
	const stepsPerPass = 4
	for _, applied := range []int64{7, 8} { // pass 1 is steps 4-7: the pservers applied up to step applied
		t.Run(fmt.Sprintf("pservers at step %d", applied), func(t *testing.T) {
			job := fmt.Sprintf("sync-catchup-%d", applied)
			_, lead := leadJob(t, cli, job, "m1")
			cfg := core.FixtureSyncConfig(3, 4, 2)
			ctx1, kill := context.WithCancel(t.Context())
			store1 := &stalledStore{Store: NewEtcdStore(cli, lead, job)}
			d1 := mustDriver(t, ctx1, cfg, ts, store1, &fakeEvaluator{}, newFakeClock())
			runSyncSteps(t, d1, 0, stepsPerPass)
			waitCore(t, d1, "end of pass 0", func(m core.Meta) bool { return m.Pass == 1 })
			got := runSyncSteps(t, d1, 4, 5)
			flush(t, d1) // saved at step 5
			store1.stall()
			got = append(got, runSyncSteps(t, d1, 5, min(applied, 7))...) // applied by the pservers, not saved
			if applied == 8 {
				got = append(got, reportPassEndUnsaved(t, ctx1, d1, 7)...)
			}
			kill()

			eval := &fakeEvaluator{}
			d2 := mustDriver(t, t.Context(), cfg, ts, NewEtcdStore(cli, lead, job), eval, newFakeClock())
			if m := metaOf(d2); m.Step != 5 || m.Pass != 1 {
				t.Fatalf("successor restored pass %d step %d, want pass 1 step 5 (the last save)", m.Pass, m.Step)
			}
			if err := d2.CatchUp(t.Context(), stepsPerPass*2+1); !errors.Is(err, core.ErrBadStep) {
				t.Fatalf("catch-up past the pass: %v, want core.ErrBadStep", err)
			}
			if err := d2.CatchUp(t.Context(), applied); err != nil {
				t.Fatal(err)
			}
			// The trainers re-send their last reports to the new master.
			for k := range 3 {
				if err := d2.StepDone(t.Context(), k, k, applied-1, epoch0, 1000, 4); err != nil {
					t.Fatalf("re-sent report of a recovered step: %v", err)
				}
			}
			if m := metaOf(d2); m.Pass == 1 && (m.Step != applied || m.PassSamples != 12*(applied-4)) {
				t.Fatalf("after the catch-up: step %d, pass samples %d, want step %d, %d samples", m.Step, m.PassSamples, applied, 12*(applied-4))
			}
			got = append(got, runSyncSteps(t, d2, applied, 8)...)
			checkCoversOnce(t, ts, got, "pass 1 across the failover")
			waitCore(t, d2, "the end of training", func(m core.Meta) bool { return m.Done })
			flush(t, d2)
			stored, _, err := NewEtcdStore(cli, lead, job).Load(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			if !stored.Done || !slices.Equal(stored.SamplesApplied, []int64{42, 42}) || stored.Step != 8 {
				t.Fatalf("stored meta %+v, want done at step 8 with samples_applied [42 42]", stored)
			}
			// Every surviving report's loss is twice its records (runSyncSteps).
			if tl := stored.Metrics.TrainLoss; tl == nil || *tl != 2 {
				t.Fatalf("train loss %v, want 2: the mean over the reported records", tl)
			}
			if calls := eval.Calls(); len(calls) != 1 || calls[0] != (evalCall{1, 8}) {
				t.Fatalf("evaluations %+v, want pass 1 at step 8", calls)
			}
		})
	}
}

// reportPassEndUnsaved has every trainer compute and report step, the last
// of its pass: the commit that ends the pass is saved before it is answered,
// so the last report waits for a save that never ends (until ctx does).
func reportPassEndUnsaved(t *testing.T, ctx context.Context, d *Driver, step int64) []core.RecordRef {
	t.Helper()
	var got []core.RecordRef
	n := d.core.Config().Trainers
	for k := range n {
		recs := core.SliceRecords(mustGetStep(t, d, k, step).Slices)
		got = append(got, recs...)
		if k < n-1 {
			mustStepDone(t, d, k, step, len(recs))
			continue
		}
		go func() { _ = d.StepDone(ctx, k, k, step, epoch0, 2*float64(len(recs)), int64(len(recs))) }()
	}
	waitCore(t, d, "the commit of the pass's last step", func(m core.Meta) bool { return m.Step == step+1 })
	return got
}
