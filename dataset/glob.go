package dataset

import (
	"fmt"
	"path/filepath"
	"slices"
)

// Glob returns the files matching pattern, sorted. Matching nothing is an
// error (ErrNoMatch) because a job over no data is always a mistake.
func Glob(pattern string) ([]string, error) {
	matches, err := filepath.Glob(pattern)
	if err != nil {
		return nil, fmt.Errorf("dataset: pattern %q: %w", pattern, err)
	}
	if len(matches) == 0 {
		return nil, fmt.Errorf("%w: pattern %q", ErrNoMatch, pattern)
	}
	slices.Sort(matches)
	return matches, nil
}
