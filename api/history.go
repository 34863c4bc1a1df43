package api

import "time"

// PassHistory is one finished pass in JobStatus.History (docs/reference.md#job-status-json history):
// what the curve of `gctl job plot` is drawn from.
type PassHistory struct {
	Pass         int      `json:"pass"`
	TrainLoss    *float64 `json:"train_loss"`
	TestLoss     *float64 `json:"test_loss"`
	TestAccuracy *float64 `json:"test_accuracy"` // null for regression
	// RecordsPerS is Samples / Seconds: the training records of the pass
	// whose gradients are in the model, per second of the pass.
	RecordsPerS float64 `json:"records_per_s"`
	// Seconds is the pass's wall time, from the end of the previous pass
	// (or the start of training) to the end of this one's evaluation; time
	// lost to a rollback within the pass counts.
	Seconds float64   `json:"seconds"`
	Samples int64     `json:"samples"`
	Step    int64     `json:"step"` // the global step at the pass's end
	Ended   time.Time `json:"ended"`
}
