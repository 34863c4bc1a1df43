package trainer

import (
	"testing"

	"google.golang.org/grpc/codes"
)

func TestActionAfterPull(t *testing.T) {
	tests := []struct {
		name string
		step int64
		pull pullResult
		want syncAction
	}{
		{"all at the step", 5, pullResult{codes.OK, 5, 5}, actionPush},
		{"all at the first step", 0, pullResult{codes.OK, 0, 0}, actionPush},
		{"all applied it already", 5, pullResult{codes.OK, 6, 6}, actionReport},
		{"some applied it, some not", 5, pullResult{codes.OK, 5, 6}, actionRollback},
		{"disagree beyond the step", 5, pullResult{codes.OK, 6, 7}, actionRollback},
		{"rolled back during the pull", 5, pullResult{codes.Aborted, 0, 0}, actionResync},
		{"not the pservers' step", 5, pullResult{codes.FailedPrecondition, 0, 0}, actionResync},
		{"unreachable past the deadline", 5, pullResult{codes.Unavailable, 0, 0}, actionFail},
		{"not a gRPC error (job ended, cancelled)", 5, pullResult{codes.Unknown, 0, 0}, actionFail},
		{"an error wins over the steps", 5, pullResult{codes.Internal, 5, 6}, actionFail},
	}
	for _, tt := range tests {
		if got := actionAfterPull(tt.step, tt.pull); got != tt.want {
			t.Errorf("%s: actionAfterPull(step %d, %+v) = %s, want %s", tt.name, tt.step, tt.pull, got, tt.want)
		}
	}
}
