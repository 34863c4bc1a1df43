package coord

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gtrain/gtrain/api"
	"github.com/gtrain/gtrain/coord/schema"
	clientv3 "go.etcd.io/etcd/client/v3"
)

func TestSetJobStateLifecycle(t *testing.T) {
	cli := dialTest(t)
	ctx := t.Context()
	job := uniqueJob(t)
	mustPutState(t, cli, job, api.StatePending)

	steps := []struct {
		state   api.JobState
		reason  string
		changed bool
		after   api.JobState
	}{
		{api.StateRunning, "placed", true, api.StateRunning},
		{api.StateRunning, "again", false, api.StateRunning}, // same state: no write
		{api.StateSucceeded, "done", true, api.StateSucceeded},
		{api.StateFailed, "late", false, api.StateSucceeded}, // terminal is final
	}
	for _, s := range steps {
		changed, err := SetJobState(ctx, cli, job, s.state, s.reason)
		if err != nil {
			t.Fatalf("SetJobState(%s): %v", s.state, err)
		}
		if changed != s.changed {
			t.Errorf("SetJobState(%s) changed = %v, want %v", s.state, changed, s.changed)
		}
		st, err := JobState(ctx, cli, job)
		if err != nil {
			t.Fatal(err)
		}
		if st.State != s.after {
			t.Errorf("after SetJobState(%s): state = %s, want %s", s.state, st.State, s.after)
		}
	}
	st, err := JobState(ctx, cli, job)
	if err != nil {
		t.Fatal(err)
	}
	if st.Reason != "done" {
		t.Errorf("reason = %q, want %q (of the transition that ended the job)", st.Reason, "done")
	}
	if st.Updated.IsZero() {
		t.Error("Updated not set by SetJobState")
	}
}

func TestSetJobStateTerminalIsFinal(t *testing.T) {
	for _, terminal := range []api.JobState{api.StateFailed, api.StateSucceeded, api.StateStopped} {
		t.Run(string(terminal), func(t *testing.T) {
			cli := dialTest(t)
			ctx := t.Context()
			job := uniqueJob(t)
			mustPutState(t, cli, job, api.StateRunning)
			if changed, err := SetJobState(ctx, cli, job, terminal, "end"); err != nil || !changed {
				t.Fatalf("SetJobState(%s) = %v, %v; want true, nil", terminal, changed, err)
			}
			resp, err := cli.Get(ctx, StateKey(job))
			if err != nil {
				t.Fatal(err)
			}
			rev := resp.Kvs[0].ModRevision
			for _, later := range []api.JobState{api.StateRunning, api.StatePending, api.StateFailed, api.StateSucceeded, api.StateStopped} {
				changed, err := SetJobState(ctx, cli, job, later, "too late")
				if err != nil || changed {
					t.Errorf("SetJobState(%s) after %s = %v, %v; want false, nil", later, terminal, changed, err)
				}
			}
			resp, err = cli.Get(ctx, StateKey(job))
			if err != nil {
				t.Fatal(err)
			}
			if got := resp.Kvs[0].ModRevision; got != rev {
				t.Errorf("state key rewritten after terminal state (mod revision %d -> %d)", rev, got)
			}
		})
	}
}

func TestSetJobStateConcurrentTerminalsOneWins(t *testing.T) {
	cli := dialTest(t)
	ctx := t.Context()
	job := uniqueJob(t)
	mustPutState(t, cli, job, api.StateRunning)

	type result struct {
		state   api.JobState
		changed bool
		err     error
	}
	const n = 8
	results := make([]result, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		state := api.StateFailed
		if i%2 == 1 {
			state = api.StateSucceeded
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			changed, err := SetJobState(ctx, cli, job, state, "racer")
			results[i] = result{state, changed, err}
		}()
	}
	close(start)
	wg.Wait()

	winners := 0
	var winner api.JobState
	for i, r := range results {
		if r.err != nil {
			t.Errorf("racer %d (%s): %v", i, r.state, r.err)
		}
		if r.changed {
			winners++
			winner = r.state
		}
	}
	if winners != 1 {
		t.Fatalf("%d racers saw changed=true, want exactly 1: %+v", winners, results)
	}
	st, err := JobState(ctx, cli, job)
	if err != nil {
		t.Fatal(err)
	}
	if st.State != winner {
		t.Errorf("final state %s, but the racer that changed it wrote %s", st.State, winner)
	}
}

func TestSetJobStateFenced(t *testing.T) {
	cli := dialTest(t)
	// Bounded, so a retry loop that ignores the fence fails instead of hanging.
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	job := uniqueJob(t)
	mustPutState(t, cli, job, api.StateRunning)
	resp, err := cli.Get(ctx, StateKey(job))
	if err != nil {
		t.Fatal(err)
	}
	rev := resp.Kvs[0].ModRevision

	// A guard that can never hold: an absent key has create revision 0.
	never := clientv3.Compare(clientv3.CreateRevision(MasterHolderKey(job)), "=", 1)
	changed, err := SetJobState(ctx, cli, job, api.StateFailed, "deposed", never)
	if !errors.Is(err, ErrFenced) {
		t.Fatalf("fenced SetJobState: err = %v, want ErrFenced", err)
	}
	if !strings.Contains(err.Error(), job) {
		t.Errorf("error %q does not name the job %q", err, job)
	}
	if changed {
		t.Error("fenced SetJobState reported changed=true")
	}
	st, err := JobState(ctx, cli, job)
	if err != nil {
		t.Fatal(err)
	}
	resp, err = cli.Get(ctx, StateKey(job))
	if err != nil {
		t.Fatal(err)
	}
	if st.State != api.StateRunning || resp.Kvs[0].ModRevision != rev {
		t.Errorf("fenced SetJobState changed the record: state %s, mod revision %d -> %d", st.State, rev, resp.Kvs[0].ModRevision)
	}

	// A guard that holds lets the write through.
	always := clientv3.Compare(clientv3.CreateRevision(MasterHolderKey(job)), "=", 0)
	if changed, err := SetJobState(ctx, cli, job, api.StateFailed, "ok", always); err != nil || !changed {
		t.Errorf("SetJobState with a true guard = %v, %v; want true, nil", changed, err)
	}
}

func TestSetJobStateUnknownJob(t *testing.T) {
	cli := dialTest(t)
	job := uniqueJob(t)
	changed, err := SetJobState(t.Context(), cli, job, api.StateRunning, "")
	if !errors.Is(err, ErrNotFound) {
		t.Fatalf("SetJobState of unknown job: err = %v, want ErrNotFound", err)
	}
	if changed {
		t.Error("SetJobState of unknown job reported changed=true")
	}
	if !strings.Contains(err.Error(), job) {
		t.Errorf("error %q does not name the job %q", err, job)
	}
	if resp, err := cli.Get(t.Context(), StateKey(job)); err != nil || len(resp.Kvs) != 0 {
		t.Errorf("SetJobState of unknown job created its state key (err %v)", err)
	}
}

func TestDecodeState(t *testing.T) {
	want := schema.StateRecord{State: api.StateStopped, Reason: "user", Updated: time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)}
	got, err := schema.Decode[schema.StateRecord]([]byte(MustJSON(want)))
	if err != nil || !got.Updated.Equal(want.Updated) || got.State != want.State || got.Reason != want.Reason {
		t.Errorf("schema.Decode round trip = %+v, %v; want %+v", got, err, want)
	}
	if _, err := schema.Decode[schema.StateRecord]([]byte("nope")); err == nil {
		t.Error("schema.Decode of garbage: no error")
	}
}

func TestAppendEventListsInTimeOrder(t *testing.T) {
	cli := dialTest(t)
	ctx := t.Context()
	job := uniqueJob(t)
	whats := []string{"submitted", "placed", "master elected", "pass 1 done", "succeeded"}
	before := time.Now()
	for _, w := range whats {
		if err := AppendEvent(ctx, cli, job, w); err != nil {
			t.Fatal(err)
		}
	}
	after := time.Now()
	events, err := ListJSON[api.Event](ctx, cli, EventPrefix(job))
	if err != nil {
		t.Fatal(err)
	}
	if len(events) != len(whats) {
		t.Fatalf("listed %d events, want %d", len(events), len(whats))
	}
	for i, e := range events {
		if e.What != whats[i] {
			t.Errorf("event %d = %q, want %q", i, e.What, whats[i])
		}
		if e.Time.Before(before) || e.Time.After(after) {
			t.Errorf("event %d time %v outside [%v, %v]", i, e.Time, before, after)
		}
		if i > 0 && e.Time.Before(events[i-1].Time) {
			t.Errorf("event %d at %v precedes event %d at %v", i, e.Time, i-1, events[i-1].Time)
		}
	}
}

// notClosedWithin fails if ch closes within d; it is the "not before" half of
// a watch test.
func notClosedWithin(t *testing.T, ch <-chan struct{}, d time.Duration, what string) {
	t.Helper()
	select {
	case <-ch:
		t.Fatalf("WatchJobEnd closed %s", what)
	case <-time.After(d):
	}
}

func closedWithin(t *testing.T, ch <-chan struct{}, d time.Duration, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(d):
		t.Fatalf("WatchJobEnd did not close within %v %s", d, what)
	}
}

func TestWatchJobEndOnTerminalState(t *testing.T) {
	cli := dialTest(t)
	ctx := t.Context()
	job := uniqueJob(t)
	mustPutState(t, cli, job, api.StatePending)
	ended := WatchJobEnd(ctx, cli, job)
	notClosedWithin(t, ended, 300*time.Millisecond, "while the job is PENDING")

	if _, err := SetJobState(ctx, cli, job, api.StateRunning, ""); err != nil {
		t.Fatal(err)
	}
	notClosedWithin(t, ended, 300*time.Millisecond, "after a non-terminal change to RUNNING")
	// An unrelated key of the job must not end it either.
	if err := AppendEvent(ctx, cli, job, "noise"); err != nil {
		t.Fatal(err)
	}
	notClosedWithin(t, ended, 200*time.Millisecond, "after an event was appended")

	if _, err := SetJobState(ctx, cli, job, api.StateSucceeded, ""); err != nil {
		t.Fatal(err)
	}
	// Well under WatchJobEnd's 5 s re-read: the watch itself must fire.
	closedWithin(t, ended, 2*time.Second, "after SUCCEEDED")
}

func TestWatchJobEndOnDeletedState(t *testing.T) {
	cli := dialTest(t)
	ctx := t.Context()
	job := uniqueJob(t)
	mustPutState(t, cli, job, api.StateRunning)
	ended := WatchJobEnd(ctx, cli, job)
	notClosedWithin(t, ended, 300*time.Millisecond, "while the job is RUNNING")

	if _, err := cli.Delete(ctx, JobPrefix(job), clientv3.WithPrefix()); err != nil {
		t.Fatal(err)
	}
	closedWithin(t, ended, 2*time.Second, "after the job's keys were deleted")
}

func TestWatchJobEndAlreadyEnded(t *testing.T) {
	cli := dialTest(t)
	ctx := t.Context()
	stopped := uniqueJob(t)
	mustPutState(t, cli, stopped, api.StateStopped)
	closedWithin(t, WatchJobEnd(ctx, cli, stopped), 2*time.Second, "for an already STOPPED job")
	closedWithin(t, WatchJobEnd(ctx, cli, uniqueJob(t)), 2*time.Second, "for a job without state")
}

func TestWatchJobEndOnContextEnd(t *testing.T) {
	cli := dialTest(t)
	job := uniqueJob(t)
	mustPutState(t, cli, job, api.StateRunning)
	ctx, cancel := context.WithCancel(t.Context())
	ended := WatchJobEnd(ctx, cli, job)
	notClosedWithin(t, ended, 200*time.Millisecond, "before its context ended")
	cancel()
	// The job did not end: a watcher that stopped must not say it did (a
	// master losing its leadership would otherwise exit 0, never restarted).
	notClosedWithin(t, ended, 500*time.Millisecond, "after its context was canceled, the job still RUNNING")
}

// WatchJobEnd reads the state and then starts a watch: a terminal write that
// lands between the two must still end the watch promptly, not only at the
// next periodic re-read. One job rarely hits that window; 128 racing jobs do.
func TestWatchJobEndSeesChangeRightAfterStart(t *testing.T) {
	cli := dialTest(t)
	ctx := t.Context()
	const jobs = 128
	late := make(chan string, jobs)
	var wg sync.WaitGroup
	for i := range jobs {
		job := uniqueJob(t)
		mustPutState(t, cli, job, api.StateRunning)
		wg.Add(1)
		go func() {
			defer wg.Done()
			ended := WatchJobEnd(ctx, cli, job)
			for range i % 8 {
				time.Sleep(50 * time.Microsecond)
			}
			if _, err := SetJobState(ctx, cli, job, api.StateSucceeded, ""); err != nil {
				t.Error(err)
				return
			}
			select {
			case <-ended:
			case <-time.After(2 * time.Second):
				late <- job
			}
		}()
	}
	wg.Wait()
	close(late)
	var missed []string
	for job := range late {
		missed = append(missed, job)
	}
	if len(missed) > 0 {
		t.Errorf("WatchJobEnd missed the terminal write of %d/%d jobs, e.g. %s (not closed within 2 s; it waits for its 5 s re-read)", len(missed), jobs, missed[0])
	}
}
