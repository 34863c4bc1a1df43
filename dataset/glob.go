package dataset

import (
	"fmt"
	"path/filepath"
	"slices"
)

// Glob returns the files matching pattern, sorted. Matching nothing is an
// error (ErrNoMatch) because a job over no data is always a mistake.
func Glob(pattern string) ([]string, error) { return GlobIn(filepath.Glob, pattern) }

// GlobIn is Glob with the matches listed by match: filepath.Glob, or a
// role's confine.Roots.Matches, which refuses a match that leads out of its
// job's roots.
func GlobIn(match func(string) ([]string, error), pattern string) ([]string, error) {
	matches, err := match(pattern)
	if err != nil {
		return nil, fmt.Errorf("dataset: pattern %q: %w", pattern, err)
	}
	if len(matches) == 0 {
		return nil, fmt.Errorf("%w: pattern %q", ErrNoMatch, pattern)
	}
	slices.Sort(matches)
	return matches, nil
}
