package jobspec

import (
	"fmt"
	"strconv"
	"time"
)

// Interval reads Every: a plain integer is a step count, anything else must
// be a Go duration. Exactly one of d and steps is non-zero on success; a zero
// or negative interval is an error (a checkpoint that never comes is not an
// interval). Errors wrap ErrInvalidInterval.
func (c CheckpointSpec) Interval() (d time.Duration, steps int64, err error) {
	if c.Every == "" {
		return 0, 0, fmt.Errorf("%w: empty; want a Go duration such as \"10s\" or a step count such as \"200\"", ErrInvalidInterval)
	}
	if n, err := strconv.ParseInt(c.Every, 10, 64); err == nil {
		if n <= 0 {
			return 0, 0, fmt.Errorf("%w %q: the step count must be at least 1", ErrInvalidInterval, c.Every)
		}
		return 0, n, nil
	}
	d, err = time.ParseDuration(c.Every)
	if err != nil {
		return 0, 0, fmt.Errorf("%w %q: want a Go duration such as \"10s\" or a step count such as \"200\"", ErrInvalidInterval, c.Every)
	}
	if d <= 0 {
		return 0, 0, fmt.Errorf("%w %q: the duration must be positive", ErrInvalidInterval, c.Every)
	}
	return d, 0, nil
}
