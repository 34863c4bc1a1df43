package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/gtrain/gtrain/api"
	"github.com/gtrain/gtrain/cmd/gctl/internal/render"
	"github.com/gtrain/gtrain/internal/retry"
)

// pollInterval is how often `job start` asks the agent for the job's status.
const pollInterval = time.Second

// maxPollFailures is how many polls in a row may find the agent unreachable
// before monitoring gives up; one dropped poll should not end a long watch.
const maxPollFailures = 5

// errDetached reports that the operator pressed Ctrl-C while monitoring.
var errDetached = errors.New("detached from the job")

// clearLine returns the cursor to column 0 and erases the line, so a
// shorter progress line leaves no tail of the previous one.
const clearLine = "\r\033[K"

// monitor follows one job until it ends, printing its progress and events.
type monitor struct {
	out io.Writer
	tty bool // rewrite one progress line in place instead of appending lines
	// width is the terminal's column count, asked before each rewrite (the
	// terminal may be resized); nil: terminalWidth(out).
	width func() int
	loc   *time.Location
	poll  func(ctx context.Context) (api.JobStatus, error)
	wait  func(ctx context.Context) error // returns when the next poll is due

	now  func() time.Time // nil: time.Now
	rate render.ETAEstimator

	seen      map[eventKey]bool
	lastPlain progressKey
	printed   bool // a plain progress line has been printed
	lineOpen  bool // a progress line without newline is on the terminal
}

// eventKey identifies an event across polls; Unix nanoseconds because
// decoded times with the same instant may carry different *Location values.
type eventKey struct {
	unixNano int64
	what     string
}

// progressKey is what must change for a non-TTY monitor to print a line.
type progressKey struct {
	pass     int
	state    api.JobState
	testLoss string
	reason   string // why a PENDING job waits
}

// run polls until the job reaches a terminal state and returns its last
// status. It returns errDetached when ctx is cancelled.
func (m *monitor) run(ctx context.Context) (api.JobStatus, error) {
	if m.seen == nil {
		m.seen = make(map[eventKey]bool)
	}
	for {
		st, err := m.pollRidingOutFailures(ctx)
		if ctx.Err() != nil || errors.Is(err, errDetached) {
			m.closeLine()
			return api.JobStatus{}, errDetached
		}
		if err != nil {
			m.closeLine()
			return api.JobStatus{}, err
		}
		if err := m.show(st); err != nil {
			return st, err
		}
		if api.Terminal(st.State) {
			m.closeLine()
			return st, nil
		}
		if err := m.wait(ctx); err != nil {
			m.closeLine()
			return api.JobStatus{}, errDetached
		}
	}
}

// pollRidingOutFailures polls, waiting as between polls after a transient
// failure, until a poll answers or maxPollFailures in a row failed.
func (m *monitor) pollRidingOutFailures(ctx context.Context) (api.JobStatus, error) {
	var st api.JobStatus
	err := retry.Do(ctx, retry.Policy{MaxAttempts: maxPollFailures}, func() error {
		var err error
		st, err = m.poll(ctx)
		if err != nil && !transient(err) {
			return retry.Permanent(err)
		}
		return err
	}, retry.WithSleep(func(ctx context.Context, _ time.Duration) error {
		if m.wait(ctx) != nil {
			return errDetached
		}
		return nil
	}))
	return st, err
}

func transient(err error) bool {
	switch status.Code(err) {
	case codes.Unavailable, codes.DeadlineExceeded:
		return true
	}
	return false
}

// show prints the events not seen before, then the progress.
func (m *monitor) show(st api.JobStatus) error {
	var b strings.Builder
	for _, e := range st.Events {
		key := eventKey{unixNano: e.Time.UnixNano(), what: e.What}
		if m.seen[key] {
			continue
		}
		m.seen[key] = true
		if m.lineOpen {
			b.WriteString(clearLine)
			m.lineOpen = false
		}
		fmt.Fprintf(&b, "event %s  %s\n", formatClock(e.Time, m.loc), e.What)
	}

	now := time.Now
	if m.now != nil {
		now = m.now
	}
	m.rate.Add(now(), st)
	line := formatProgress(st) + m.rate.Suffix(st)
	if m.tty {
		b.WriteString(clearLine + render.FitWidth(line, m.columns()))
		m.lineOpen = true
	} else if key := progressKeyOf(st); !m.printed || key != m.lastPlain {
		b.WriteString(line + "\n")
		m.lastPlain, m.printed = key, true
	}
	_, err := io.WriteString(m.out, b.String())
	return err
}

// columns is the terminal's width now.
func (m *monitor) columns() int {
	if m.width != nil {
		return m.width()
	}
	return render.TerminalWidth(m.out)
}

// closeLine ends an open progress line so what follows starts in column 0.
func (m *monitor) closeLine() {
	if m.lineOpen {
		_, _ = io.WriteString(m.out, "\n")
		m.lineOpen = false
	}
}

func progressKeyOf(st api.JobStatus) progressKey {
	key := progressKey{pass: st.Pass, state: st.State, testLoss: render.FormatFloat(st.Metrics.TestLoss)}
	if st.State == api.StatePending {
		key.reason = st.Reason
	}
	return key
}

// formatProgress is the one-line view of a running job, e.g.
// `passes 3/30 done  step 120  tasks todo 4 pending 2 done 14 failed 0  train_loss 21.3  test_loss 23.9  [RUNNING]`;
// a PENDING job says why it waits: `[PENDING: needs 3 cpu for 3 trainers ...]`.
// It counts the passes done (status `pass`): pass 3, the fourth, is running,
// as history and plots number passes from 0.
func formatProgress(st api.JobStatus) string {
	var b strings.Builder
	fmt.Fprintf(&b, "passes %d/%d done  step %d  tasks todo %d pending %d done %d failed %d  train_loss %s  test_loss %s",
		st.Pass, st.Passes, st.Step, st.Tasks.Todo, st.Tasks.Pending, st.Tasks.Done, st.Tasks.Failed,
		render.FormatFloat(st.Metrics.TrainLoss), render.FormatFloat(st.Metrics.TestLoss))
	if st.Metrics.TestAccuracy != nil {
		b.WriteString("  test_accuracy " + render.FormatFloat(st.Metrics.TestAccuracy))
	}
	if st.State == api.StatePending && st.Reason != "" {
		b.WriteString("  [PENDING: " + st.Reason + "]")
		return b.String()
	}
	b.WriteString("  [" + string(st.State) + "]")
	return b.String()
}

func formatClock(t time.Time, loc *time.Location) string {
	if t.IsZero() {
		return "--:--:--"
	}
	return t.In(loc).Format("15:04:05")
}

// writeFinal is what `job start` leaves on screen when the job has ended.
func writeFinal(w io.Writer, st api.JobStatus) error {
	var b strings.Builder
	fmt.Fprintf(&b, "job %s %s after %d/%d passes, step %d\n", st.Name, st.State, st.Pass, st.Passes, st.Step)
	if st.Reason != "" {
		fmt.Fprintf(&b, "reason: %s\n", st.Reason)
	}
	fmt.Fprintf(&b, "metrics: %s\n", render.FormatMetrics(st.Metrics))
	fmt.Fprintf(&b, "samples applied: %s\n", render.FormatSamplesApplied(st.SamplesApplied, st.Mode))
	fmt.Fprintf(&b, "model_dir: %s\n", render.Dash(st.ModelDir))
	_, err := io.WriteString(w, b.String())
	return err
}

// finalError turns a job that ended without success into gctl's exit 1.
func finalError(st api.JobStatus) error {
	switch st.State {
	case api.StateSucceeded:
		return nil
	case api.StateFailed:
		reason := st.Reason
		if reason == "" {
			reason = "no reason given"
		}
		return fmt.Errorf("%w: job %s FAILED: %s (see `gctl job logs %s` and `gctl job status %s`)",
			ErrJobNotSucceeded, st.Name, reason, st.Name, st.Name)
	default:
		return fmt.Errorf("%w: job %s ended %s before finishing its %s passes (see `gctl job status %s`)",
			ErrJobNotSucceeded, st.Name, st.State, strconv.Itoa(st.Passes), st.Name)
	}
}
