package jobspec

import (
	"fmt"
	"time"
)

// Crash budget defaults (SPEC §4 `restarts`).
const (
	DefaultRestartLimit  = 5
	DefaultRestartWindow = "60s"
	// maxRestartLimit and maxRestartWindow bound a budget to something that
	// still fails a role that crashes for good within a working day.
	maxRestartLimit  = 1000
	maxRestartWindow = 24 * time.Hour
)

// RestartsSpec is the crash budget of each role of the job: a role that
// crashes more than Limit times within Window fails the job. Exits caused
// by losing etcd or the job's master are not crashes (the agent restarts
// those without counting them).
type RestartsSpec struct {
	Limit  int    `yaml:"limit" json:"limit"`
	Window string `yaml:"window" json:"window"`
}

// WindowDuration is Window as a duration.
func (r RestartsSpec) WindowDuration() (time.Duration, error) {
	d, err := time.ParseDuration(r.Window)
	if err != nil {
		return 0, fmt.Errorf("%w %q: want a Go duration such as \"60s\" or \"5m\"", ErrInvalidWindow, r.Window)
	}
	if d <= 0 || d > maxRestartWindow {
		return 0, fmt.Errorf("%w %q: must be positive and at most %s", ErrInvalidWindow, r.Window, maxRestartWindow)
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
	return nil
}
