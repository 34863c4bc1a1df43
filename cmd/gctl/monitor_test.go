package main

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/gtrain/gtrain/api"
)

func TestFormatProgress(t *testing.T) {
	tests := []struct {
		name string
		st   api.JobStatus
		want string
	}{
		{
			"running with losses",
			api.JobStatus{State: api.StateRunning, Pass: 3, Passes: 30, Step: 120,
				Tasks:   api.TaskCounts{Todo: 4, Pending: 2, Done: 14},
				Metrics: api.Metrics{TrainLoss: ptr(21.3), TestLoss: ptr(23.9)}},
			"passes 3/30 done  step 120  tasks todo 4 pending 2 done 14 failed 0  train_loss 21.3  test_loss 23.9  [RUNNING]",
		},
		{
			"pending, nothing measured",
			api.JobStatus{State: api.StatePending, Passes: 5},
			"passes 0/5 done  step 0  tasks todo 0 pending 0 done 0 failed 0  train_loss -  test_loss -  [PENDING]",
		},
		{
			"pending says why",
			api.JobStatus{State: api.StatePending, Passes: 5, Reason: "needs 3 cpu for 3 trainers (1 cpu each); free: n1 0.5 cpu"},
			"passes 0/5 done  step 0  tasks todo 0 pending 0 done 0 failed 0  train_loss -  test_loss -  " +
				"[PENDING: needs 3 cpu for 3 trainers (1 cpu each); free: n1 0.5 cpu]",
		},
		{
			"classifier shows accuracy",
			api.JobStatus{State: api.StateRunning, Pass: 1, Passes: 2, Step: 7, Tasks: api.TaskCounts{Failed: 1},
				Metrics: api.Metrics{TrainLoss: ptr(0.5), TestLoss: ptr(0.25), TestAccuracy: ptr(0.9125)}},
			"passes 1/2 done  step 7  tasks todo 0 pending 0 done 0 failed 1  train_loss 0.5  test_loss 0.25  test_accuracy 0.9125  [RUNNING]",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := formatProgress(tt.st); got != tt.want {
				t.Errorf("formatProgress:\n got %q\nwant %q", got, tt.want)
			}
		})
	}
}

// scripted returns a poll function that answers with the statuses (or
// errors) in turn and fails the test if polled past the end.
func scripted(t *testing.T, answers ...any) func(context.Context) (api.JobStatus, error) {
	i := 0
	return func(context.Context) (api.JobStatus, error) {
		if i >= len(answers) {
			t.Fatalf("polled %d times, only %d answers scripted", i+1, len(answers))
		}
		a := answers[i]
		i++
		if err, ok := a.(error); ok {
			return api.JobStatus{}, err
		}
		return a.(api.JobStatus), nil
	}
}

func noWait(ctx context.Context) error { return ctx.Err() }

func running(pass int, testLoss *float64, events ...api.Event) api.JobStatus {
	return api.JobStatus{Name: "j", State: api.StateRunning, Pass: pass, Passes: 3, Metrics: api.Metrics{TestLoss: testLoss}, Events: events}
}

func TestMonitorPlainPrintsOnlyChanges(t *testing.T) {
	e1 := api.Event{Time: testNow, What: "trainer-0 started"}
	e2 := api.Event{Time: testNow.Add(time.Second), What: "pserver-1 restarted from checkpoint step 1200"}
	done := running(3, ptr(1.5), e1, e2)
	done.State = api.StateSucceeded

	var out bytes.Buffer
	m := &monitor{out: &out, loc: time.UTC, wait: noWait, poll: scripted(t,
		running(0, nil, e1),
		running(0, nil, e1), // nothing new: no line
		func() api.JobStatus { s := running(0, nil, e1); s.Step = 99; return s }(), // only the step moved: no line
		running(1, ptr(2.5), e1, e2),
		running(1, ptr(2.5), e1, e2),
		done,
	)}
	st, err := m.run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if st.State != api.StateSucceeded {
		t.Errorf("final state %s, want SUCCEEDED", st.State)
	}
	want := []string{
		"event 12:00:00  trainer-0 started",
		"passes 0/3 done  step 0  tasks todo 0 pending 0 done 0 failed 0  train_loss -  test_loss -  [RUNNING]",
		"event 12:00:01  pserver-1 restarted from checkpoint step 1200",
		"passes 1/3 done  step 0  tasks todo 0 pending 0 done 0 failed 0  train_loss -  test_loss 2.5  [RUNNING]",
		"passes 3/3 done  step 0  tasks todo 0 pending 0 done 0 failed 0  train_loss -  test_loss 1.5  [SUCCEEDED]",
	}
	if got := strings.TrimRight(out.String(), "\n"); got != strings.Join(want, "\n") {
		t.Errorf("plain monitor output:\n%s\nwant:\n%s", got, strings.Join(want, "\n"))
	}
	if strings.Contains(out.String(), "\r") {
		t.Error("plain output contains carriage returns")
	}
}

func TestMonitorTTYRewritesOneLine(t *testing.T) {
	e := api.Event{Time: testNow, What: "trainer-1 restarted"}
	done := running(3, ptr(1), e)
	done.State = api.StateSucceeded
	var out bytes.Buffer
	m := &monitor{out: &out, tty: true, loc: time.UTC, wait: noWait, poll: scripted(t, running(1, nil), running(2, nil, e), done)}
	if _, err := m.run(context.Background()); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	if n := strings.Count(got, clearLine+"passes "); n != 3 {
		t.Errorf("progress line drawn %d times, want 3 (one per poll):\n%q", n, got)
	}
	// The event clears the progress line, takes a line of its own, and the
	// progress line is redrawn below it.
	if !strings.Contains(got, "[RUNNING]"+clearLine+"event 12:00:00  trainer-1 restarted\n"+clearLine+"passes 2/3 done") {
		t.Errorf("event not printed on its own line between progress redraws:\n%q", got)
	}
	if strings.Count(got, "trainer-1 restarted") != 1 {
		t.Errorf("event printed more than once:\n%q", got)
	}
	if !strings.HasSuffix(got, "[SUCCEEDED]\n") {
		t.Errorf("final progress line not closed with a newline:\n%q", got)
	}
}

func TestMonitorDetachesOnCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	var out bytes.Buffer
	polls := 0
	m := &monitor{out: &out, tty: true, loc: time.UTC,
		poll: func(context.Context) (api.JobStatus, error) { polls++; return running(1, nil), nil },
		wait: func(ctx context.Context) error { cancel(); return ctx.Err() },
	}
	_, err := m.run(ctx)
	if !errors.Is(err, errDetached) {
		t.Fatalf("err = %v, want errDetached", err)
	}
	if polls != 1 {
		t.Errorf("polled %d times after Ctrl-C, want 1", polls)
	}
	if !strings.HasSuffix(out.String(), "\n") {
		t.Errorf("progress line left open after detaching: %q", out.String())
	}
}

func TestMonitorToleratesBriefOutages(t *testing.T) {
	unavailable := status.Error(codes.Unavailable, "connection refused")
	done := running(3, nil)
	done.State = api.StateFailed

	answers := []any{running(1, nil)}
	for range maxPollFailures - 1 {
		answers = append(answers, unavailable)
	}
	answers = append(answers, done)
	m := &monitor{out: &bytes.Buffer{}, loc: time.UTC, wait: noWait, poll: scripted(t, answers...)}
	st, err := m.run(context.Background())
	if err != nil || st.State != api.StateFailed {
		t.Fatalf("after %d failed polls: state %q, err %v; want the FAILED status", maxPollFailures-1, st.State, err)
	}

	answers = []any{running(1, nil)}
	for range maxPollFailures {
		answers = append(answers, unavailable)
	}
	m = &monitor{out: &bytes.Buffer{}, loc: time.UTC, wait: noWait, poll: scripted(t, answers...)}
	if _, err := m.run(context.Background()); status.Code(err) != codes.Unavailable {
		t.Errorf("after %d failed polls: err %v, want Unavailable", maxPollFailures, err)
	}

	notFound := status.Error(codes.NotFound, "no job j")
	m = &monitor{out: &bytes.Buffer{}, loc: time.UTC, wait: noWait, poll: scripted(t, notFound)}
	if _, err := m.run(context.Background()); status.Code(err) != codes.NotFound {
		t.Errorf("NotFound: err %v, want it returned at once", err)
	}
}

func TestFinalError(t *testing.T) {
	tests := []struct {
		state   api.JobState
		reason  string
		wantErr bool
		want    []string
	}{
		{api.StateSucceeded, "", false, nil},
		{api.StateFailed, "trainer-0 exited 3 times", true, []string{"FAILED", "trainer-0 exited 3 times", "gctl job logs j"}},
		{api.StateStopped, "", true, []string{"STOPPED", "gctl job status j"}},
	}
	for _, tt := range tests {
		err := finalError(api.JobStatus{Name: "j", State: tt.state, Reason: tt.reason, Passes: 3})
		if (err != nil) != tt.wantErr {
			t.Fatalf("%s: err = %v, want error %v", tt.state, err, tt.wantErr)
		}
		if err == nil {
			continue
		}
		if exitCode(err) != exitFailure {
			t.Errorf("%s: exit %d, want %d", tt.state, exitCode(err), exitFailure)
		}
		for _, w := range tt.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: message %q lacks %q", tt.state, err.Error(), w)
			}
		}
	}
}
