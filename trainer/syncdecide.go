package trainer

import "github.com/gtrain/gtrain/api"

// syncState is what the sync loop (runSync) decides its next move by, read
// afresh at each turn.
type syncState struct {
	leaving bool  // told to stop (leave.go)
	resync  bool  // the last step ended without moving on (trainStep's done false)
	epoch   int64 // the rollback epoch the trainer works in (0: none yet)
	// work is the work at hand: the last report's answer, or what the
	// master just handed out (fetched); nil: none.
	work    *api.GetStepResponse
	fetched bool
	// prefetched is the step whose parameters the last push brought back
	// (nil: none).
	prefetched *stepOfEpoch
}

// syncMove is what the sync loop does next.
type syncMove int

const (
	// moveResync: pause, then ask the master where the job is (step 0),
	// without spinning through a rollback.
	moveResync syncMove = iota
	// moveLeave: told to stop; leave between micro-batches.
	moveLeave
	// moveLeaveUnstarted: told to stop as the master handed out a
	// micro-batch: leave it unstarted, the master gives it to another
	// trainer when this one's lease goes.
	moveLeaveUnstarted
	// moveAsk: no work at hand: ask the master for it.
	moveAsk
	// moveDone: the master says training is done.
	moveDone
	// moveWait: the master has no work yet: ask again.
	moveWait
	// moveTrain: train the work (trainStep).
	moveTrain
)

func (m syncMove) String() string {
	return [...]string{"resync", "leave", "leave unstarted", "ask", "done", "wait", "train"}[m]
}

// syncDecision is the next move, and for moveTrain how.
type syncDecision struct {
	move syncMove
	// newEpoch: the work is of another rollback epoch than the trainer's
	// (a rollback, maybe a re-shard): follow the layout, forget the reports
	// kept for a new master.
	newEpoch bool
	// pull: the step's parameters must be pulled; false when the last push
	// brought them back.
	pull bool
}

// decideSync is the sync loop's decision at each turn; the loop carries it
// out (runSync) and the pulled parameters' verdict is actionAfterPull's.
func decideSync(s syncState) syncDecision {
	switch {
	case s.resync:
		return syncDecision{move: moveResync}
	case s.leaving && !s.fetched:
		return syncDecision{move: moveLeave}
	case s.work == nil:
		return syncDecision{move: moveAsk}
	}
	switch s.work.Status {
	case api.WorkStatus_WORK_DONE:
		return syncDecision{move: moveDone}
	case api.WorkStatus_WORK_WAIT:
		return syncDecision{move: moveWait}
	}
	if s.leaving && s.work.Status == api.WorkStatus_WORK_READY {
		return syncDecision{move: moveLeaveUnstarted}
	}
	have := s.prefetched != nil && *s.prefetched == (stepOfEpoch{s.work.Step, s.work.Epoch})
	return syncDecision{move: moveTrain, newEpoch: s.work.Epoch != s.epoch, pull: !have}
}
