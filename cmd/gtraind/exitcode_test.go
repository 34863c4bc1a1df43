package main

import (
	"errors"
	"fmt"
	"testing"

	"github.com/gtrain/gtrain/daemon"
)

// A --node-name or a --data-dir held by a live agent is a rejected
// setting: exit 2; a data dir without room is a failure: exit 1.
func TestNodeNameTakenExits2(t *testing.T) {
	for _, err := range []error{
		fmt.Errorf("agent: %w: node name %q is held by a live agent", daemon.ErrNodeNameTaken, "h1"),
		fmt.Errorf("%w: /d is held by another gtraind agent (pid 7)", daemon.ErrDataDirInUse),
	} {
		if got := exitCode(err); got != 2 {
			t.Errorf("exitCode(%v) = %d, want 2", err, got)
		}
	}
	if err := fmt.Errorf("%w: /d has 3 MiB free", daemon.ErrDataDirFull); exitCode(err) != 1 {
		t.Errorf("exitCode(%v) = %d, want 1", err, exitCode(err))
	}
	if got := exitCode(errors.New("etcd unreachable")); got != 1 {
		t.Errorf("exitCode(other failure) = %d, want 1", got)
	}
}
