package dataset

import (
	"fmt"
	"math"
)

// LabelStats summarises a shard's labels, so that a job can be checked
// against them at submit (a classifier on regression labels, a label past
// the model's classes) from the shard's header alone, without reading its
// records. The zero value means unknown: a shard written before the stats
// were, or an empty one (a written one has Whole set or a NotWhole label,
// which is never 0).
type LabelStats struct {
	Min   float32 `json:"min"`
	Max   float32 `json:"max"`
	Whole bool    `json:"whole"` // every label is a whole number
	// NotWhole is the first label that is not a whole number (when !Whole):
	// such labels cannot be class indices.
	NotWhole float32 `json:"not_whole,omitempty"`
}

// Known reports whether the stats were written.
func (s LabelStats) Known() bool { return s != LabelStats{} }

func labelStats(examples []Example) LabelStats {
	if len(examples) == 0 {
		return LabelStats{}
	}
	s := LabelStats{Min: examples[0].Label, Max: examples[0].Label, Whole: true}
	for _, e := range examples {
		s.Min, s.Max = min(s.Min, e.Label), max(s.Max, e.Label)
		if s.Whole && !isWhole(e.Label) {
			s.Whole, s.NotWhole = false, e.Label
		}
	}
	return s
}

func isWhole(v float32) bool { return float64(v) == math.Trunc(float64(v)) }

func (s LabelStats) validate() error {
	if s.Known() && !(s.Min <= s.Max) {
		return fmt.Errorf("labels: min %v is not at most max %v", s.Min, s.Max)
	}
	return nil
}

// maxClassWarning is the inferred class count above which convert looks for
// classes without a record: MNIST-style sets have 10.
const maxClassWarning = 10

// classWarning is a warning when IDX labels made convert infer more classes
// than the usual 10 and some of them have no record (one label of 200 makes
// 201 classes, 190 of them empty): a damaged or wrong labels file, or a set
// whose class count should be stated with --classes. Empty when all is well.
func classWarning(o ConvertOptions, examples []Example, classes int) string {
	if o.Format != FormatIDX || o.Classes != 0 || classes <= maxClassWarning {
		return ""
	}
	seen := make([]bool, classes)
	for _, e := range examples {
		seen[int(e.Label)] = true
	}
	empty := 0
	for _, s := range seen {
		if !s {
			empty++
		}
	}
	if empty == 0 {
		return ""
	}
	return fmt.Sprintf("the largest label in %s is %d, so the shards say %d classes, but %d of the classes in [0, %d) have no record: "+
		"check the labels file, or state the count with --classes N", o.Labels, classes-1, classes, empty, classes)
}
