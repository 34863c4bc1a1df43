package dataset

import (
	"encoding/json"
	"fmt"
	"math"
	"os"

	"gonum.org/v1/gonum/stat"
)

// Stats are the per-feature normalisation statistics Convert saves beside the
// shards as PREFIX-stats.json, so that new inputs can be scaled the same way.
type Stats struct {
	Features int       `json:"features"`
	Mean     []float64 `json:"mean"`
	Std      []float64 `json:"std"` // population standard deviation
}

// StatsPath is where Convert writes the statistics for an output prefix.
func StatsPath(outPrefix string) string {
	return outPrefix + "-stats.json"
}

// ReadStats reads a stats file written by Convert and checks that it can
// scale records: one finite mean and one finite, non-negative std per feature.
func ReadStats(path string) (Stats, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Stats{}, fmt.Errorf("dataset: statistics: %w", err)
	}
	var s Stats
	if err := json.Unmarshal(data, &s); err != nil {
		return Stats{}, fmt.Errorf("%w: %s is not a statistics file written by --normalize: %v", ErrBadStats, path, err)
	}
	if s.Features < 1 || len(s.Mean) != s.Features || len(s.Std) != s.Features {
		return Stats{}, fmt.Errorf("%w: %s: features %d with %d means and %d stds", ErrBadStats, path, s.Features, len(s.Mean), len(s.Std))
	}
	for j := range s.Features {
		if m, d := s.Mean[j], s.Std[j]; math.IsNaN(m) || math.IsInf(m, 0) || !(d >= 0) || math.IsInf(d, 0) {
			return Stats{}, fmt.Errorf("%w: %s: feature %d has mean %v and std %v, want finite numbers and std >= 0", ErrBadStats, path, j, m, d)
		}
	}
	return s, nil
}

// check refuses statistics made for records of another width.
func (s Stats) check(path string, features int) error {
	if s.Features != features {
		return fmt.Errorf("%w: %s holds statistics of %d features, the input records have %d: give the statistics of this data's training set",
			ErrStatsMismatch, path, s.Features, features)
	}
	return nil
}

// computeStats takes mean and population std of every feature column.
func computeStats(examples []Example, features int) Stats {
	s := Stats{Features: features, Mean: make([]float64, features), Std: make([]float64, features)}
	column := make([]float64, len(examples))
	for j := range features {
		for i, e := range examples {
			column[i] = float64(e.Features[j])
		}
		s.Mean[j], s.Std[j] = stat.PopMeanStdDev(column, nil)
	}
	return s
}

// Apply scales the features of examples in place: (x-mean)/std, or x-mean for
// a constant column (std 0).
func (s Stats) Apply(examples []Example) {
	for _, e := range examples {
		for j, x := range e.Features {
			v := float64(x) - s.Mean[j]
			if s.Std[j] != 0 {
				v /= s.Std[j]
			}
			e.Features[j] = float32(v)
		}
	}
}
