package main

import (
	"testing"

	"github.com/gtrain/gtrain/api"
)

// `job plot` refuses an --out that is not a PNG (exit 2) and says so when
// there is nothing to plot yet; with history it prints the text chart.
func TestJobPlotCommand(t *testing.T) {
	st := api.JobStatus{Name: "fit", State: api.StateRunning, Mode: "sync", Passes: 30}
	done := st
	done.Pass = 5
	for p := range 5 {
		loss, accuracy := 1/float64(p+1), 0.5+0.1*float64(p)
		done.History = append(done.History, api.PassHistory{Pass: p, TrainLoss: &loss, TestLoss: &loss, TestAccuracy: &accuracy})
	}
	addr := startAgent(t, &fakeAgent{statuses: []api.JobStatus{st, done}})

	a, stdout, stderr := newTestApp(t)
	r := runGctl(t, a, stdout, stderr, "--addr", addr, "job", "plot", "fit", "--out", "loss.txt")
	wantRun(t, r, exitRejected, nil, []string{"ending in .png"})

	a, stdout, stderr = newTestApp(t)
	r = runGctl(t, a, stdout, stderr, "--addr", addr, "job", "plot", "fit", "--out", "loss.png")
	wantRun(t, r, exitFailure, nil, []string{"job fit has no finished pass yet", "loss.png not written"})

	a, stdout, stderr = newTestApp(t)
	r = runGctl(t, a, stdout, stderr, "--addr", addr, "job", "plot", "fit")
	wantRun(t, r, exitOK, []string{"fit: loss per pass", "fit: test accuracy per pass", "* test accuracy"}, nil)
}
