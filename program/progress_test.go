package program

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gtrain/gtrain/model"
)

// TestTorchProgress: through shared memory the adapter accepts progress
// frames and tells every parameter once, the last layer's first, each
// with its final sums already in the shared gradients; the sums are the
// bits of a request without progress. Through the pipe nothing is offered.
func TestTorchProgress(t *testing.T) {
	ctx := context.Background()
	pc, _ := startTorchCNN(t, true)
	sc, sd := startTorchCNN(t, false)
	if pc.Progress() || !sc.Progress() {
		t.Fatalf("progress accepted through the pipe %v, through shared memory %v; want false, true", pc.Progress(), sc.Progress())
	}
	b := imageBatch(20)
	st := Step{Number: 4, Seed: RequestSeed(3, 4, 0)}
	want := zeros(sd.Params)
	wantLoss, err := sc.GradientAt(ctx, st, sd.Params, sd.Init, b, want)
	if err != nil {
		t.Fatal(err)
	}
	var order []int
	atTell := map[int][]float32{}
	got := zeros(sd.Params)
	loss, err := sc.GradientProgress(ctx, st, sd.Params, sd.Init, b, got, &model.Progress{Ready: func(j int) {
		order = append(order, j)
		atTell[j] = slices.Clone(sc.shm.gradViews[j])
	}})
	if err != nil || loss != wantLoss {
		t.Fatalf("loss %v (%v), want %v", loss, err, wantLoss)
	}
	sameBits(t, "gradient with progress frames", got, want)
	if len(order) != len(sd.Params) || (order[0] != 4 && order[0] != 5) {
		t.Fatalf("told %v; want each of the %d parameters once, the last layer's first", order, len(sd.Params))
	}
	for j, v := range atTell {
		if !slices.Equal(v, want[j]) {
			t.Errorf("parameter %d told before its sums were final", j)
		}
	}
}

// TestBadProgressFrames: a progress frame the trainer did not offer, or
// that names a parameter not declared, twice, or with a non-finite sum,
// is a protocol violation that fails the job, told before any of it is
// pushed.
func TestBadProgressFrames(t *testing.T) {
	for _, tc := range []struct{ mode, inText string }{
		{"shm-ready-unaccepted", "outside a gradient request, or not accepted at declare"},
		{"shm-ready-twice", "parameter 1 is not one of the 2 declared, or was told before"},
		{"shm-ready-range", "parameter 7 is not one of the 2 declared"},
		{"shm-ready-nan", "gradient value 0 of parameter 0 is +Inf (told final)"},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			c := startBad(t, tc.mode, 5*time.Second)
			ctx := context.Background()
			d, err := c.Declare(ctx, DeclareArgs{Seed: 1, Inputs: 2, Outputs: 3})
			if err != nil {
				t.Fatal(err)
			}
			var told []int
			params, grads := c.Buffers()
			if c.Progress() {
				_, err = c.GradientProgress(ctx, Step{}, d.Params, params, smallBatch(), grads, &model.Progress{Ready: func(j int) { told = append(told, j) }})
			} else {
				_, err = c.GradientAt(ctx, Step{}, d.Params, params, smallBatch(), grads)
			}
			if !errors.Is(err, ErrProtocol) || !strings.Contains(err.Error(), tc.inText) {
				t.Fatalf("got %v, want a protocol violation containing %q", err, tc.inText)
			}
			if tc.mode == "shm-ready-nan" && len(told) > 0 {
				t.Fatalf("a non-finite gradient was told final: %v", told)
			}
		})
	}
}
