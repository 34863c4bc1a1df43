package trainer

import (
	"context"
	"fmt"
	"time"

	"github.com/gtrain/gtrain/api"
	"github.com/gtrain/gtrain/dataset"
	"github.com/gtrain/gtrain/internal/clock"
	"github.com/gtrain/gtrain/program"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// runSync follows the master's step plan. After a rollback (a new epoch)
// it starts again where the master says; a push the pservers already applied
// (this trainer died after pushing it) is not pushed twice. Each turn,
// decideSync says what to do and the loop does it.
func (t *trainer) runSync(ctx context.Context, step int64) error {
	var s syncState
	defer func() { _ = t.dropEarly() }() // ending anyway: the error is the one returned
	for {
		s.leaving, s.prefetched = t.leaving(), t.carry.prefetched
		d := decideSync(s)
		// Only a micro-batch trained next can be the early one. A trainer
		// done or leaving has no use for its program any more.
		if err := t.dropEarlyBefore(d); err != nil {
			return err
		}
		switch d.move {
		case moveResync:
			// Ask the master where the job is (step 0 means "your step"),
			// without spinning through a rollback. Not this trainer's own
			// step: after a master failover that lost reports, the master
			// is behind it and must be caught up from its step.
			t.pause(ctx)
			s.resync, step = false, 0
		case moveLeave:
			t.log.Info("told to stop; leaving between micro-batches", "step", step)
			return t.stop.Err()
		case moveLeaveUnstarted:
			t.log.Info("told to stop; leaving a micro-batch not started", "step", s.work.Step, "micro_batch", s.work.MicroBatch)
			return t.stop.Err()
		case moveAsk:
			w, err := t.getStep(ctx, step, s.epoch)
			if err != nil {
				return err
			}
			s.work, s.fetched = w, true
		case moveDone:
			t.log.Info("training done", "step", step, "early_micro_batches", t.earlyTaken, "early_dropped", t.earlyDropped, "early_ahead", t.earlyAhead)
			return nil
		case moveWait:
			s.work, s.fetched = nil, false
		case moveTrain:
			var err error
			if step, err = t.trainSyncStep(ctx, &s, d); err != nil {
				return err
			}
		}
	}
}

// trainSyncStep trains the work at hand as d says and leaves s for the next
// turn: the report's answer as the next work (pushreport.go), or a resync.
// It returns the step trained.
func (t *trainer) trainSyncStep(ctx context.Context, s *syncState, d syncDecision) (int64, error) {
	w := s.work
	if d.newEpoch {
		t.followLayout(ctx) // a re-shard rolls back too: layout_follow.go
		t.enterEpoch(s.epoch, w)
		s.epoch = w.Epoch
	}
	done, err := t.trainStep(ctx, w, d.pull)
	if err != nil {
		return w.Step, err
	}
	s.work, s.fetched, s.resync = t.carry.next, false, !done
	t.carry.next = nil
	if !done {
		s.work = nil
	}
	return w.Step, nil
}

func (t *trainer) getStep(ctx context.Context, step, epoch int64) (*api.GetStepResponse, error) {
	var w *api.GetStepResponse
	err := t.master.call(ctx, "get a step", func(m api.MasterClient) error {
		var err error
		w, err = m.GetStep(ctx, &api.GetStepRequest{TrainerId: int32(t.id), Step: step, Epoch: epoch})
		return err
	})
	return w, err
}

// enterEpoch moves the trainer from epoch to the epoch of the step the
// master handed out: the job rolled back, and the reports kept for a new
// master are stale.
func (t *trainer) enterEpoch(epoch int64, w *api.GetStepResponse) {
	if epoch != 0 {
		t.log.Warn("the job rolled back; resuming where the master says", "epoch", w.Epoch, "step", w.Step)
	}
	t.master.forget()
}

// trainStep computes, pushes and reports the step w; done is false when the
// trainer must ask the master again instead of moving to the next step.
func (t *trainer) trainStep(ctx context.Context, w *api.GetStepResponse, pull bool) (done bool, err error) {
	e, err := t.takeEarly(w, pull)
	if err != nil {
		return false, err
	}
	if e != nil {
		// What examplesAndParams would have done: the records and the
		// parameters are the early micro-batch's.
		t.carry.prefetched, t.carry.readAhead = nil, nil
		return t.pushWhileComputing(ctx, w, len(e.hint.ex), e.c, t.hintOf(w))
	}
	ex, pulled, err, rerr := t.examplesAndParams(ctx, w, pull)
	if rerr != nil {
		return false, rerr
	}
	switch actionAfterPull(w.Step, pulled) {
	case actionFail:
		return false, err
	case actionResync:
		return false, nil
	case actionRollback:
		return false, t.requestRollback(ctx, w, pulled)
	case actionPush:
		return t.computeAndReport(ctx, w, ex, true)
	default: // actionReport
		return t.computeAndReport(ctx, w, ex, false)
	}
}

// examplesAndParams reads w's records (or takes them from the read ahead:
// pushreport.go, or from the hint's read: hint.go) and puts the parameters of its step in t.params (pulled
// if pull, else the last push brought them); err is the pull's, rerr the
// read's. The records are read while the pull waits
// for the pservers to reach the step (the other micro-batches of the step
// before).
func (t *trainer) examplesAndParams(ctx context.Context, w *api.GetStepResponse, pull bool) (ex []dataset.Example, pulled pullResult, err, rerr error) {
	ahead := t.carry.readAhead
	t.carry.readAhead = nil
	if ahead != nil && ahead.work == w {
		pulled, err = t.paramsOf(ctx, w, pull)
		return ahead.ex, pulled, err, ahead.err
	}
	read := make(chan error, 1)
	go func() {
		var err error
		ex, err = t.examplesOf(w)
		read <- err
	}()
	pulled, err = t.paramsOf(ctx, w, pull)
	return ex, pulled, err, <-read
}

// stepExamples reads the records of the step's slices.
func (t *trainer) stepExamples(w *api.GetStepResponse) ([]dataset.Example, error) {
	var ex []dataset.Example
	for _, sl := range w.Slices {
		var err error
		if ex, err = t.data.appendSlice(ex, sl.File, int(sl.Chunk), int(sl.First), int(sl.Count)); err != nil {
			return nil, fmt.Errorf("trainer: step %d: %w", w.Step, err)
		}
	}
	return ex, nil
}

// stepOfEpoch names a step's parameters: the step in a rollback epoch.
type stepOfEpoch struct{ step, epoch int64 }

// paramsOf puts the parameters of w's step in t.params: pulled, unless the
// last push brought them back already (pull false: decideSync).
func (t *trainer) paramsOf(ctx context.Context, w *api.GetStepResponse, pull bool) (pullResult, error) {
	t.carry.prefetched = nil
	if !pull {
		return pullResult{code: codes.OK, lowest: w.Step, highest: w.Step}, nil
	}
	return t.pullStep(ctx, w.Step, w.Epoch)
}

// pullStep pulls the parameters of step into t.params. A pull waits at
// most pullWait for the pservers to reach step: a micro-batch of the step
// before may have been given back by a lost trainer, and this trainer, asking
// the master again, may be the one to compute it.
func (t *trainer) pullStep(ctx context.Context, step, epoch int64) (pullResult, error) {
	var pull pullResult
	pctx, cancel := clock.WithTimeout(ctx, t.clock, pullWait)
	defer cancel()
	gen := t.ps.Generation()
	err := t.retryTransient(pctx, "pull parameters", func() error {
		var err error
		pull.lowest, pull.highest, err = t.ps.Pull(pctx, step, epoch, t.params)
		return t.psErr(pctx, err)
	})
	pull.code = status.Code(err)
	switch {
	case err != nil && ctx.Err() == nil && pctx.Err() != nil:
		pull.code = codes.Aborted // waited long enough: resync with the master
	case err != nil && !resyncCode(pull.code) && t.layoutMoved(ctx, err, gen):
		pull.code = codes.Aborted // the new cut answered a pull of the old one
	}
	return pull, err
}

// pullWait bounds a pull's wait for the pservers to reach its step.
const pullWait = 2 * time.Second

func (t *trainer) requestRollback(ctx context.Context, w *api.GetStepResponse, pull pullResult) error {
	reason := fmt.Sprintf("%s found pservers at steps %d and %d for step %d", t.cfg.Worker, pull.lowest, pull.highest, w.Step)
	t.log.Warn("pservers disagree; asking the master to roll back", "reason", reason)
	return t.master.call(ctx, "request a rollback", func(m api.MasterClient) error {
		_, err := m.RequestRollback(ctx, &api.RequestRollbackRequest{TrainerId: int32(t.id), Epoch: w.Epoch, Reason: reason})
		return err
	})
}

// computeAndReport computes the gradients of ex, pushes them if push says
// so, and reports the step to the master.
func (t *trainer) computeAndReport(ctx context.Context, w *api.GetStepResponse, ex []dataset.Example, push bool) (bool, error) {
	t.progStep = program.Step{Number: w.Step, Seed: program.RequestSeed(t.spec.Seed, w.Step, int(w.MicroBatch))}
	hint := t.hintOf(w)
	if t.rec != nil {
		gen := t.ps.Generation()
		// The rows' gradients go with the dense push (client.Rows: in its
		// first message where the pservers take them so), not before it.
		loss, err := t.recCompute(ctx, ex, w.Slices, w.Step, w.Epoch, int(w.MicroBatch), false)
		hint.start()
		switch {
		case resync(err) || (err != nil && t.layoutMoved(ctx, err, gen)):
			return false, nil
		case err != nil:
			return false, err
		case push:
			return t.pushAndReport(ctx, w, func() float64 { return loss }, len(ex), func() { t.pullRowsAhead(ctx, w, hint) }, t.rowsOf(ex)...)
		}
		return t.reportStep(ctx, w, loss, len(ex))
	}
	if push && t.overlaps() {
		return t.computeWhilePushing(ctx, w, ex, hint)
	}
	loss, err := t.compute(ex, nil)
	hint.start()
	if err != nil {
		return false, err
	}
	if push {
		return t.pushAndReport(ctx, w, func() float64 { return loss }, len(ex), nil)
	}
	return t.reportStep(ctx, w, loss, len(ex))
}

// overlaps says whether the push of a micro-batch's gradient can start
// while it computes: a built-in model's, or a program's that tells its
// progress (a recommender's rows are pushed after).
func (t *trainer) overlaps() bool {
	if t.prog != nil {
		return t.prog.Progress() && t.layout != nil
	}
	return t.layout != nil && t.layout.Model != nil
}

// reportStep tells the master the step is done, asking for the next work
// in the same call (kept in t.carry.next). A report the master refuses (it moved
// on: a rollback) sends the trainer back to it.
func (t *trainer) reportStep(ctx context.Context, w *api.GetStepResponse, loss float64, records int) (bool, error) {
	report := &api.StepDoneRequest{TrainerId: int32(t.id), Step: w.Step, LossSum: loss, Records: int64(records), Epoch: w.Epoch,
		MicroBatch: w.MicroBatch}
	t.master.remember(report)
	err := t.master.call(ctx, "report the step", func(m api.MasterClient) error {
		// A copy asks for the next work (not when told to stop: nothing is
		// handed to a trainer about to leave); the report remembered for a
		// new master is re-sent without.
		r, err := m.StepDone(ctx, &api.StepDoneRequest{TrainerId: report.TrainerId, Step: report.Step, LossSum: report.LossSum,
			Records: report.Records, Epoch: report.Epoch, MicroBatch: report.MicroBatch, WantNext: !t.leaving()})
		if err == nil {
			t.carry.next = r.GetNext()
		}
		return err
	})
	if status.Code(err) == codes.InvalidArgument {
		t.log.Warn("step report refused; resyncing with the master", "step", w.Step, "err", err)
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if w.Step%50 == 0 {
		t.log.Info("step done", "step", w.Step, "pass", w.Pass, "records", records, "loss", safeMean(loss, records))
	}
	return true, nil
}

// resync reports errors after which a sync trainer asks the master again.
func resync(err error) bool { return resyncCode(status.Code(err)) }

// pause keeps a trainer that must resync from spinning while a rollback is
// under way.
func (t *trainer) pause(ctx context.Context) { _ = t.clock.Sleep(ctx, 50*time.Millisecond) }
