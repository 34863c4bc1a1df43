package trainer

import (
	"github.com/gtrain/gtrain/api"
	"github.com/gtrain/gtrain/program"
)

// earlyStep is a micro-batch computing before the master named it: the
// one its hint names next (hint.go), started once the push of the one
// before brought back its step's parameters, while the step report is
// still on its way. The report waits for every pserver's acknowledgement,
// and its answer then takes a round trip to the master: 1.2-1.8 ms a step
// in traces of the CNN program job on the 2-core VM (the master's handler
// 0.1-0.2 ms of it; a gRPC call to a process idle for 30 ms costs 0.85 ms
// there against 0.3 back to back), when the parameters were back 0.8-1.2
// ms after the program's answer. The early micro-batch is only computed,
// never pushed, until the answer names the same work (takeEarly); any
// other answer waits for it and drops it. Its gradient is the one the
// named work would compute: the same parameters (the push brought back
// exactly its step's), records (the hint's slices are the work's) and
// request seed (the same step and micro-batch).
type earlyStep struct {
	step, epoch int64
	microBatch  int32
	hint        *hintRead // its records: read, without error
	c           *computation
}

// startEarly starts computing the micro-batch after w early when the push
// of w brought back the parameters of w's next step and w's hint named its
// records (read without error). Called once w's gradient is computed and
// pushed, before the report's answer.
//
// Only for the trainer's own micro-batch (its index is its ID): the master
// hands each trainer that one of every step (core.pickMicroBatch), so the
// hint names its next work. A trainer covering another's micro-batch, or
// one of several per trainer, gets the next step's first open one
// instead, and an early micro-batch dropped costs a whole computation.
func (t *trainer) startEarly(w *api.GetStepResponse, hint *hintRead) {
	if t.early != nil {
		return
	}
	next, ok := t.hintedNext(w, hint)
	if !ok {
		return
	}
	t.progStep = program.Step{Number: next.step, Seed: program.RequestSeed(t.spec.Seed, next.step, int(w.MicroBatch))}
	t.early = &earlyStep{step: next.step, epoch: next.epoch, microBatch: w.MicroBatch, hint: hint, c: t.startComputing(hint.ex)}
}

// hintedNext is the step and epoch of the micro-batch after w, when this
// trainer may work on it before the report's answer names it: w is its own
// micro-batch (see startEarly), it is not leaving, the push of w brought
// back that step's parameters, and w's hint named its records, read
// without error (hint.ex). ok is false otherwise.
func (t *trainer) hintedNext(w *api.GetStepResponse, hint *hintRead) (next stepOfEpoch, ok bool) {
	next = stepOfEpoch{w.Step + 1, w.Epoch}
	if hint == nil || int(w.MicroBatch) != t.id || t.leaving() || t.carry.prefetched == nil || *t.carry.prefetched != next {
		return next, false
	}
	hint.start()
	<-hint.done
	return next, hint.err == nil
}

// takeEarly returns the early micro-batch when it is w's (w's parameters
// are the ones it computes with: pull false), and drops it otherwise (see
// dropEarly for the error).
func (t *trainer) takeEarly(w *api.GetStepResponse, pull bool) (*earlyStep, error) {
	e := t.early
	if e == nil {
		return nil, nil
	}
	if !pull && w.Status == api.WorkStatus_WORK_READY && e.step == w.Step && e.epoch == w.Epoch && e.microBatch == w.MicroBatch &&
		sameSlices(e.hint.slices, w.Slices) {
		t.early = nil
		t.earlyTaken++
		return e, nil
	}
	return nil, t.dropEarly()
}

// dropEarly waits for an early micro-batch nobody will use, if any, before
// the parameters or gradients are touched again: at most the one
// computation in flight, as a trainer told to leave while it computes
// waits for it too. It returns the error of a program that failed (a
// crash, or a malformed or error answer, on records the job holds): the
// next request would meet it again, so the trainer ends with it now, with
// the crash recorded once. A built-in model's only error, bad records, is
// dropped: only the work that names them reports them.
func (t *trainer) dropEarly() error {
	e := t.early
	if e == nil {
		return nil
	}
	t.early = nil
	t.earlyDropped++
	<-e.c.computed
	if t.prog == nil {
		return nil
	}
	return e.c.err
}

// dropEarlyBefore drops the early micro-batch before a move that does not
// train its work: any but moveTrain, or a train in a new epoch, whose
// layout may move the parameters. It returns dropEarly's error, but for a
// trainer done or leaving, which needs its program no more.
func (t *trainer) dropEarlyBefore(d syncDecision) error {
	if d.move == moveTrain && !d.newEpoch {
		return nil
	}
	err := t.dropEarly()
	switch d.move {
	case moveDone, moveLeave, moveLeaveUnstarted:
		return nil
	}
	return err
}
