package main

import (
	"errors"
	"fmt"
	"testing"

	"github.com/gtrain/gtrain/daemon"
)

// A --node-name held by a live agent is a rejected setting: exit 2.
func TestNodeNameTakenExits2(t *testing.T) {
	err := fmt.Errorf("agent: %w: node name %q is held by a live agent", daemon.ErrNodeNameTaken, "h1")
	if got := exitCode(err); got != 2 {
		t.Errorf("exitCode(%v) = %d, want 2", err, got)
	}
	if got := exitCode(errors.New("etcd unreachable")); got != 1 {
		t.Errorf("exitCode(other failure) = %d, want 1", got)
	}
}
