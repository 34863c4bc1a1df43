package core

import (
	"time"

	"github.com/gtrain/gtrain/api"
)

// passHistory is the history entry of the pass end ends, m being the meta
// before the pass was closed: its samples and start time.
func passHistory(m Meta, end PassEnd, metrics api.Metrics, now time.Time) *api.PassHistory {
	h := &api.PassHistory{
		Pass: end.Pass, TrainLoss: metrics.TrainLoss, TestLoss: metrics.TestLoss, TestAccuracy: metrics.TestAccuracy,
		Samples: m.PassSamples, Step: end.Step, Ended: now.UTC(),
	}
	if !m.PassStart.IsZero() && now.After(m.PassStart) {
		h.Seconds = now.Sub(m.PassStart).Seconds()
		h.RecordsPerS = float64(m.PassSamples) / h.Seconds
	}
	return h
}
