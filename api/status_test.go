package api

import "testing"

func TestTerminal(t *testing.T) {
	tests := []struct {
		state JobState
		want  bool
	}{
		{StatePending, false},
		{StateRunning, false},
		{StateSucceeded, true},
		{StateFailed, true},
		{StateStopped, true},
	}
	for _, tt := range tests {
		if got := Terminal(tt.state); got != tt.want {
			t.Errorf("Terminal(%s) = %v, want %v", tt.state, got, tt.want)
		}
	}
}

func TestWorkerStateActive(t *testing.T) {
	tests := []struct {
		state WorkerState
		want  bool
	}{
		{WorkerPending, false},
		{WorkerStarting, true},
		{WorkerRunning, true},
		{WorkerRestarting, true},
		{WorkerExited, false},
		{WorkerFailed, false},
		{WorkerStopped, false},
		{WorkerLost, false},
	}
	for _, tt := range tests {
		if got := tt.state.Active(); got != tt.want {
			t.Errorf("%s.Active() = %v, want %v", tt.state, got, tt.want)
		}
	}
}
