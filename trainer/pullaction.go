package trainer

import "google.golang.org/grpc/codes"

// syncAction is what a sync trainer does with its step once it has pulled
// the step's parameters.
type syncAction int

const (
	// actionPush: every pserver is at the step; push the gradients.
	actionPush syncAction = iota
	// actionReport: every pserver applied the step already (this trainer's
	// push landed before it crashed); report the step without pushing twice.
	// The loss is then measured one step late.
	actionReport
	// actionRollback: some pservers applied the step and others did not: a
	// trainer died mid-push. The step's parameters are gone on the first
	// ones, so no correct gradient exists: ask the master to roll back.
	actionRollback
	// actionResync: the job rolled back (a new epoch) while the pull
	// waited, or the step is not the pservers': ask the master again.
	actionResync
	// actionFail: the pull failed for good.
	actionFail
)

func (a syncAction) String() string {
	switch a {
	case actionPush:
		return "push"
	case actionReport:
		return "report"
	case actionRollback:
		return "rollback"
	case actionResync:
		return "resync"
	case actionFail:
		return "fail"
	}
	return "unknown"
}

// pullResult is how the pservers answered a pull of one step.
type pullResult struct {
	code            codes.Code // of the pull's error; codes.OK when every pserver answered
	lowest, highest int64      // the least and the most advanced pserver's step
}

// actionAfterPull decides what a sync trainer at step does given how the
// pservers answered its pull. A pserver answers once it has applied step,
// and refuses a pull of another epoch.
func actionAfterPull(step int64, pull pullResult) syncAction {
	switch {
	case resyncCode(pull.code):
		return actionResync
	case pull.code != codes.OK:
		return actionFail
	case pull.lowest != pull.highest:
		return actionRollback
	case pull.highest == step:
		return actionPush
	default:
		return actionReport
	}
}

// resyncCode reports the status codes after which a sync trainer asks the
// master again: a rollback aborted its pull (Aborted), or it pushed for a
// step the pservers are not at (FailedPrecondition).
func resyncCode(c codes.Code) bool {
	return c == codes.Aborted || c == codes.FailedPrecondition
}
