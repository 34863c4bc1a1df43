package main

import (
	"testing"

	"github.com/gtrain/gtrain/program"
)

// TestSubmitOutlastsDeclare: gctl waits for a submit longer than the agent
// may take to run a program job's declare, so that a slow program is
// reported as the agent's answer, not as an agent that did not answer.
func TestSubmitOutlastsDeclare(t *testing.T) {
	if submitTimeout <= program.DefaultTimeout {
		t.Fatalf("submitTimeout %v, the declare's timeout %v: gctl gives up first", submitTimeout, program.DefaultTimeout)
	}
}
