package e2e

import (
	"os"
	"testing"

	"github.com/gtrain/gtrain/internal/testing/e2erig"
)

// TestMain builds gctl and gtraind unless $GTRAIN_BIN has them (make test
// sets it). Every test here runs alone: none calls t.Parallel, and the
// tests that mostly wait (long outages, repeated master deaths, a
// trainer stopped 35 s while its job trains on) live in
// e2e/endurance, a package go test runs beside this one.
func TestMain(m *testing.M) { os.Exit(e2erig.Main(m, 0)) }

// restartAgent starts a new agent process over the same data dir and ports.
func restartAgent(t *testing.T, old *e2erig.Agent) *e2erig.Agent {
	t.Helper()
	a := &e2erig.Agent{DataDir: old.DataDir, API: old.API, Etcd: old.Etcd, Log: old.Log}
	a.Launch(t, old.Cmd.Args[1:]...)
	return a
}
