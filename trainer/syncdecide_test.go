package trainer

import (
	"testing"

	"github.com/gtrain/gtrain/api"
)

func TestDecideSync(t *testing.T) {
	work := func(status api.WorkStatus, step, epoch int64) *api.GetStepResponse {
		return &api.GetStepResponse{Status: status, Step: step, Epoch: epoch}
	}
	ready := func(step, epoch int64) *api.GetStepResponse { return work(api.WorkStatus_WORK_READY, step, epoch) }
	done, wait := work(api.WorkStatus_WORK_DONE, 0, 0), work(api.WorkStatus_WORK_WAIT, 0, 0)
	tests := []struct {
		name string
		s    syncState
		want syncDecision
	}{
		{"no work: ask the master", syncState{}, syncDecision{move: moveAsk}},
		{"a step that did not move on: resync first", syncState{resync: true, leaving: true}, syncDecision{move: moveResync}},
		{"told to stop, no work", syncState{leaving: true}, syncDecision{move: moveLeave}},
		{"told to stop with the report's answer at hand", syncState{leaving: true, work: ready(3, 1), epoch: 1}, syncDecision{move: moveLeave}},
		{"told to stop as the master handed out work", syncState{leaving: true, fetched: true, work: ready(3, 1), epoch: 1}, syncDecision{move: moveLeaveUnstarted}},
		{"told to stop as the master said done", syncState{leaving: true, fetched: true, work: done}, syncDecision{move: moveDone}},
		{"told to stop as the master said wait", syncState{leaving: true, fetched: true, work: wait}, syncDecision{move: moveWait}},
		{"done", syncState{fetched: true, work: done}, syncDecision{move: moveDone}},
		{"wait", syncState{fetched: true, work: wait}, syncDecision{move: moveWait}},
		{"the first work: a new epoch, pulled", syncState{fetched: true, work: ready(0, 1)}, syncDecision{move: moveTrain, newEpoch: true, pull: true}},
		{"the next step of the epoch", syncState{epoch: 1, work: ready(4, 1)}, syncDecision{move: moveTrain, pull: true}},
		{"the step the push brought back", syncState{epoch: 1, work: ready(4, 1), prefetched: &stepOfEpoch{4, 1}}, syncDecision{move: moveTrain}},
		{"brought back another step", syncState{epoch: 1, work: ready(5, 1), prefetched: &stepOfEpoch{4, 1}}, syncDecision{move: moveTrain, pull: true}},
		{"a rollback since the push: pull despite it", syncState{epoch: 1, work: ready(4, 2), prefetched: &stepOfEpoch{4, 1}}, syncDecision{move: moveTrain, newEpoch: true, pull: true}},
	}
	for _, tt := range tests {
		if got := decideSync(tt.s); got != tt.want {
			t.Errorf("%s: decideSync = %+v (%s), want %+v (%s)", tt.name, got, got.move, tt.want, tt.want.move)
		}
	}
}
