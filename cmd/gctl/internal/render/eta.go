package render

import (
	"fmt"
	"strconv"
	"time"

	"github.com/gtrain/gtrain/api"
)

// etaWindow is how far back the rate behind the ETA looks: long enough to
// smooth a pass end's evaluation pause, short enough to follow a job that
// speeds up or slows down (a trainer restarting).
const etaWindow = time.Minute

// etaSample is where the job was at one poll: passes done, fractional.
type etaSample struct {
	at  time.Time
	pos float64
}

// ETAEstimator turns the polls of `job start` into a rate of passes per
// second and so an ETA. It is reset when the job goes back (a rollback).
type ETAEstimator struct {
	samples []etaSample
}

// position is how many passes st has done, the current one by its share
// of done tasks.
func position(st api.JobStatus) float64 {
	t := st.Tasks
	total := t.Todo + t.Pending + t.Done + t.Failed
	pos := float64(st.Pass)
	if total > 0 && st.Pass < st.Passes {
		pos += float64(t.Done) / float64(total)
	}
	return pos
}

// Add records st at now.
func (e *ETAEstimator) Add(now time.Time, st api.JobStatus) {
	pos := position(st)
	if n := len(e.samples); n > 0 && pos < e.samples[n-1].pos {
		e.samples = e.samples[:0] // rolled back: the old rate says nothing
	}
	e.samples = append(e.samples, etaSample{at: now, pos: pos})
	for len(e.samples) > 2 && now.Sub(e.samples[0].at) > etaWindow {
		e.samples = e.samples[1:]
	}
}

// eta is the time left to passes at the rate seen; ok false until the job
// has moved over at least a second.
func (e *ETAEstimator) eta(passes int) (time.Duration, bool) {
	if len(e.samples) < 2 {
		return 0, false
	}
	first, last := e.samples[0], e.samples[len(e.samples)-1]
	dt := last.at.Sub(first.at)
	if dt < time.Second || last.pos <= first.pos {
		return 0, false
	}
	rate := (last.pos - first.pos) / dt.Seconds()
	left := max(0, float64(passes)-last.pos)
	return time.Duration(left / rate * float64(time.Second)), true
}

// Suffix is the rate part of the progress line: the newest finished pass's
// records/s and the ETA, e.g. "  1234 rec/s  ETA 2m10s"; "" when neither is
// known yet.
func (e *ETAEstimator) Suffix(st api.JobStatus) string {
	var s string
	if n := len(st.History); n > 0 {
		s += "  " + strconv.FormatFloat(st.History[n-1].RecordsPerS, 'f', 0, 64) + " rec/s"
	}
	if api.Terminal(st.State) || st.State == api.StatePending {
		return s
	}
	if d, ok := e.eta(st.Passes); ok {
		s += "  ETA " + formatETA(d)
	}
	return s
}

// formatETA rounds d to what a person reads at a glance: "45s", "3m10s", "2h05m".
func formatETA(d time.Duration) string {
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Round(time.Second)/time.Second))
	case d < time.Hour:
		d = d.Round(time.Second)
		return fmt.Sprintf("%dm%02ds", int(d/time.Minute), int(d%time.Minute/time.Second))
	default:
		d = d.Round(time.Minute)
		return fmt.Sprintf("%dh%02dm", int(d/time.Hour), int(d%time.Hour/time.Minute))
	}
}
