package jobspec

import (
	"fmt"
	"time"
)

// Crash budget defaults (docs/reference.md#job-spec `restarts`).
const (
	DefaultRestartLimit  = 5
	DefaultRestartWindow = "60s"
	// DefaultHungAfter is how long a sync job waits for a live worker that
	// does not progress before its agent kills it to restart it.
	DefaultHungAfter = "60s"
	// maxHungAfter bounds the wait so a hang never stalls a job for long.
	maxHungAfter = time.Hour
	// maxRestartLimit and maxRestartWindow bound a budget to something that
	// still fails a role that crashes for good within a working day.
	maxRestartLimit  = 1000
	maxRestartWindow = 24 * time.Hour
)

// RestartsSpec is the crash budget of each role of the job: a role that
// crashes more than Limit times within Window fails the job. Exits caused
// by losing etcd or the job's master are not crashes (the agent restarts
// those without counting them).
//
// HungAfter (sync jobs) is how long a worker may be alive without
// progressing — a trainer that has not reported the step the others did, a
// pserver that does not answer the master's health probe — before the
// master declares it hung and its agent kills it to restart it. That kill
// counts against the budget: a hang is the role's fault.
type RestartsSpec struct {
	Limit     int    `yaml:"limit" json:"limit"`
	Window    string `yaml:"window" json:"window"`
	HungAfter string `yaml:"hung_after" json:"hung_after"`
}

// WindowDuration is Window as a duration.
func (r RestartsSpec) WindowDuration() (time.Duration, error) {
	return boundedDuration(r.Window, maxRestartWindow, ErrInvalidWindow)
}

// HungAfterDuration is HungAfter as a duration.
func (r RestartsSpec) HungAfterDuration() (time.Duration, error) {
	return boundedDuration(r.HungAfter, maxHungAfter, ErrInvalidHungAfter)
}

// boundedDuration reads s as a Go duration in (0, most]; invalid wraps the error.
func boundedDuration(s string, most time.Duration, invalid error) (time.Duration, error) {
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("%w %q: want a Go duration such as \"60s\" or \"5m\"", invalid, s)
	}
	if d <= 0 || d > most {
		return 0, fmt.Errorf("%w %q: must be positive and at most %s", invalid, s, most)
	}
	return d, nil
}

func (r RestartsSpec) validate() *FieldError {
	if r.Limit < 1 || r.Limit > maxRestartLimit {
		return fieldError("restarts.limit", fmt.Sprintf("must be between 1 and %d, got %d", maxRestartLimit, r.Limit), nil)
	}
	if _, err := r.WindowDuration(); err != nil {
		return fieldError("restarts.window", err.Error(), err)
	}
	if _, err := r.HungAfterDuration(); err != nil {
		return fieldError("restarts.hung_after", err.Error(), err)
	}
	return nil
}
