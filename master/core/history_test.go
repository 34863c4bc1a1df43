package core

import (
	"testing"
	"time"

	"github.com/gtrain/gtrain/api"
)

// TestPassHistoryEntry: a pass's entry has its losses, samples, seconds
// since the pass started and the records per second they make.
func TestPassHistoryEntry(t *testing.T) {
	start := time.Unix(1000, 0)
	tl, acc := 0.5, 0.9
	m := Meta{PassSamples: 404, PassStart: start}
	h := passHistory(m, PassEnd{Pass: 3, Step: 44}, api.Metrics{TrainLoss: &tl, TestAccuracy: &acc}, start.Add(2*time.Second))
	if h.Pass != 3 || h.Step != 44 || h.Samples != 404 || h.Seconds != 2 || h.RecordsPerS != 202 || *h.TrainLoss != 0.5 || *h.TestAccuracy != 0.9 {
		t.Errorf("entry %+v", h)
	}
	if h := passHistory(Meta{PassSamples: 404}, PassEnd{}, api.Metrics{}, start); h.Seconds != 0 || h.RecordsPerS != 0 {
		t.Errorf("without a start time: %+v, want no seconds nor rate", h)
	}
}
