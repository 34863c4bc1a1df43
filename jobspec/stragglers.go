package jobspec

import (
	"fmt"
	"time"
)

// Straggler deadline defaults (sync): a micro-batch not reported within
// DefaultStragglerFactor times the recent mean micro-batch time, and at
// least DefaultStragglerWait, is handed to another live trainer too.
const (
	DefaultStragglerFactor = 4
	DefaultStragglerWait   = time.Second
	// maxStragglerFactor and maxStragglerWait bound a deadline to one that
	// still routes around a stalled trainer within the hung_after limit.
	maxStragglerFactor = 100
	maxStragglerWait   = time.Hour
)

// StragglersSpec sets the straggler deadline of a sync job. Zero values
// mean the defaults, so a spec that says nothing keeps them as they evolve.
type StragglersSpec struct {
	Factor  int    `yaml:"factor" json:"factor,omitempty"`
	MinWait string `yaml:"min_wait" json:"min_wait,omitempty"`
}

// Deadline returns the factor and the floor of the deadline, defaults
// filled in; the spec must have passed Validate.
func (s StragglersSpec) Deadline() (factor int, floor time.Duration) {
	factor, floor = DefaultStragglerFactor, DefaultStragglerWait
	if s.Factor != 0 {
		factor = s.Factor
	}
	if s.MinWait != "" {
		floor, _ = boundedDuration(s.MinWait, maxStragglerWait, ErrInvalidStragglerWait)
	}
	return factor, floor
}

func (s StragglersSpec) validate() *FieldError {
	if s.Factor != 0 && (s.Factor < 2 || s.Factor > maxStragglerFactor) {
		return fieldError("stragglers.factor", fmt.Sprintf("must be between 2 and %d (times the recent mean micro-batch time), got %d", maxStragglerFactor, s.Factor), nil)
	}
	if s.MinWait == "" {
		return nil
	}
	if _, err := boundedDuration(s.MinWait, maxStragglerWait, ErrInvalidStragglerWait); err != nil {
		return fieldError("stragglers.min_wait", err.Error(), err)
	}
	return nil
}
