package trainer

import (
	"context"
	"log/slog"
	"math"
	"sync"

	"github.com/gtrain/gtrain/api"
	"github.com/gtrain/gtrain/dataset"
	"github.com/gtrain/gtrain/pserver/client"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// pushAndReport pushes the gradients of w's micro-batch over records
// records and reports it to the master. A push that waits for its step
// (push) reports as soon as every pserver took it, while the step waits
// for its other micro-batches: the master's answer, the next work, then
// comes with the next step's parameters instead of after them, and its
// records are read meanwhile (t.carry.readAhead). If that answer is another
// micro-batch of the same step (the master gave this trainer one that no
// other took), the step cannot be applied before this trainer computes it:
// the push stops waiting.
//
// pushed, when not nil, is called once the push succeeded if the report's
// answer has not come yet: the time to start the next micro-batch early.
func (t *trainer) pushAndReport(ctx context.Context, w *api.GetStepResponse, loss func() float64, records int, pushed func(), opts ...client.PushOption) (bool, error) {
	type result struct {
		done bool
		err  error
	}
	var once sync.Once
	reported := make(chan result, 1)
	started := false
	pctx, stopWaiting := context.WithCancel(ctx)
	defer stopWaiting()
	// report reports w; waiting says the push is still waiting for the
	// step, the time to read the next work's records in.
	report := func(waiting bool) {
		once.Do(func() {
			started = true
			go func() {
				done, err := t.reportStep(ctx, w, loss(), records)
				next := t.carry.next
				ready := next != nil && next.Status == api.WorkStatus_WORK_READY
				if ready && next.Step == w.Step && next.Epoch == w.Epoch {
					stopWaiting()
				}
				if waiting && done && ready {
					ex, err := t.examplesOf(next)
					t.carry.readAhead = &readAhead{work: next, ex: ex, err: err}
				}
				reported <- result{done, err}
			}()
		})
	}
	accepted := func() { report(true) }
	gen := t.ps.Generation()
	err := t.retryTransient(ctx, "push gradients", func() error { return t.psErr(ctx, t.push(pctx, w, int64(records), accepted, opts)) })
	if err != nil {
		once.Do(func() {}) // no report after a failed push
		if started {
			<-reported // not expected: a push acknowledged by every pserver succeeds
		}
		if resync(err) || t.layoutMoved(ctx, err, gen) {
			return false, nil
		}
		if client.IsNonFinite(err) {
			return t.reportStep(ctx, w, nonFiniteLoss(t.log, err), records)
		}
		return false, err
	}
	report(false) // a plain push, or one in an applied step already
	select {
	case r := <-reported:
		return r.done, r.err
	default:
	}
	if pushed != nil {
		pushed()
	}
	r := <-reported
	return r.done, r.err
}

// push pushes the gradients of w's micro-batch over records records and
// calls accepted once every pserver took them (not always: see
// client.Client.PushPull). When the master said the step's other
// micro-batches are covered, the push waits for the step and brings back the
// next step's parameters, kept for the next micro-batch if it is of that
// step (paramsOf).
func (t *trainer) push(ctx context.Context, w *api.GetStepResponse, records int64, accepted func(), opts []client.PushOption) error {
	if !w.PullWithPush {
		return t.ps.Push(ctx, int(w.MicroBatch), w.Step, w.Epoch, records, w.Checkpoint, t.grads, opts...)
	}
	pulled, err := t.ps.PushPull(ctx, int(w.MicroBatch), w.Step, w.Epoch, records, w.Checkpoint, t.grads, t.params, accepted, opts...)
	if err != nil {
		// A computation started ahead may read parameters this push wrote,
		// which a retry would write again: it stops first (ahead.go).
		t.settle(t.ahead)
	}
	if status.Code(err) == codes.Unimplemented {
		// A pserver of an older build: push, and pull the next step as before.
		return t.ps.Push(ctx, int(w.MicroBatch), w.Step, w.Epoch, records, w.Checkpoint, t.grads, opts...)
	}
	if err == nil && pulled.All && pulled.Lowest == w.Step+1 && pulled.Highest == w.Step+1 {
		t.carry.prefetched = &stepOfEpoch{w.Step + 1, w.Epoch}
	}
	return err
}

// readAhead is the records of the next work, read while the push waited
// for its step.
type readAhead struct {
	work *api.GetStepResponse
	ex   []dataset.Example
	err  error
}

// nonFiniteLoss is the loss a trainer reports for a batch whose gradient
// the pservers refused for a NaN or an infinity: NaN, so that the master
// fails the job as diverged ("diverged at pass P step S (loss nan)")
// instead of the trainer crashing until its budget is spent.
func nonFiniteLoss(log *slog.Logger, err error) float64 {
	log.Error("the pservers refused a non-finite gradient; reporting the loss as NaN: the job diverged", "err", err)
	return math.NaN()
}
