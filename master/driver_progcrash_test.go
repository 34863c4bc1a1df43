package master

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gtrain/gtrain/api"
	"github.com/gtrain/gtrain/dataset"
	"github.com/gtrain/gtrain/master/core"
	"github.com/gtrain/gtrain/program"
	"github.com/gtrain/gtrain/pserver/client"
)

// programEvaluator evaluates with a real model program, as the leader's
// PassEvaluator does for a job of kind program, counting its attempts.
type programEvaluator struct {
	e        *PassEvaluator
	params   [][]float32
	attempts atomic.Int32
}

func (p *programEvaluator) EndPass(ctx context.Context, pass int, step int64) (api.Metrics, error) {
	p.attempts.Add(1)
	_, _, err := p.e.evaluate(ctx, p.params, step)
	return api.Metrics{}, err
}

// A model program that dies while the master evaluates a pass (SIGKILL, as
// from the OOM killer) stops this master with the program's error instead of
// retrying a dead program for ever: the leader then ends and its agent
// restarts it against the crash budget. The job is not failed, and the
// crash is told to the job (FailJob, which records the event).
func TestDriverStopsWhenTheEvaluationProgramDies(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a Python program")
	}
	dir := t.TempDir()
	helpers, err := filepath.Abs(filepath.Join("..", "examples", "program"))
	if err != nil {
		t.Fatal(err)
	}
	src := fmt.Sprintf(`import os, signal, sys
import numpy as np
sys.path.insert(0, %q)
import gtrainprog

class M:
    def declare(self, seed, inputs, outputs, hidden):
        return [("w", (inputs, outputs), np.zeros((inputs, outputs), np.float32))]
    def gradient(self, params, x, y):
        return [np.zeros_like(params[0])], 0.0
    def evaluate(self, params, x, y):
        os.kill(os.getpid(), signal.SIGKILL)

gtrainprog.serve(M())
`, helpers)
	if err := os.WriteFile(filepath.Join(dir, "dies.py"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := program.Start(program.Config{Argv: []string{"/usr/bin/python3", "dies.py"}, Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	d, err := c.Declare(t.Context(), program.DeclareArgs{Seed: 1, Inputs: 2, Outputs: 3})
	if err != nil {
		t.Fatal(err)
	}
	var told []error
	pe := &programEvaluator{params: d.Init}
	pe.e = &PassEvaluator{Layout: &client.Layout{Params: d.Params}, Program: c,
		Test:    []dataset.Example{{Features: []float32{1, 2}, Label: 1}},
		FailJob: func(_ context.Context, err error) { told = append(told, err) }}

	cfg := core.FixtureSyncConfig(3, 4, 2)
	cfg.LongPoll = 5 * time.Millisecond
	drv := mustDriver(t, t.Context(), cfg, core.FixtureTaskSet(), &MemStore{}, pe, newFakeClock())
	changed := drv.Changed()
	runSyncSteps(t, drv, 0, 4) // the pass ends: the master evaluates it
	deadline := time.After(20 * time.Second)
	for drv.Fatal() == nil {
		select {
		case <-deadline:
			t.Fatalf("the master neither stopped nor failed the job after its program died: %d attempts, failed %q", pe.attempts.Load(), drv.Failed())
		case <-time.After(10 * time.Millisecond):
		}
	}
	select {
	case <-changed:
	default:
		t.Error("Changed was not closed: the leader waiting on it would not see the stop")
	}
	if err := drv.Fatal(); !program.IsCrash(err) || !strings.Contains(err.Error(), "signal: killed") || !strings.Contains(err.Error(), "pass 0") {
		t.Errorf("Fatal() = %v; want the program's death by signal at pass 0's evaluation", err)
	}
	time.Sleep(2 * evalRetry) // a retry would come within evalRetry
	if n := pe.attempts.Load(); n != 1 {
		t.Errorf("%d evaluation attempts; want 1: a dead program answers nothing", n)
	}
	if drv.Failed() != "" || metaOf(drv).Pass != 0 {
		t.Errorf("failed %q, pass %d; want the job not failed and the pass not ended (a successor evaluates it)", drv.Failed(), metaOf(drv).Pass)
	}
	if len(told) != 1 || !program.IsCrash(told[0]) || program.IsProgramError(told[0]) {
		t.Errorf("told %v; want the crash once, not as a program's error", told)
	}
}

// A commit waiting for a save when the Driver halts returns the halt's
// error: once fatal is set no save comes to wake it, and the leader's own
// commits (its tick) would otherwise keep it from ever seeing Fatal.
func TestHaltWakesCommitWaiters(t *testing.T) {
	cfg := core.FixtureSyncConfig(3, 4, 2)
	cfg.LongPoll = 5 * time.Millisecond
	drv := mustDriver(t, t.Context(), cfg, core.FixtureTaskSet(), &MemStore{}, &flakyEvaluator{}, newFakeClock())
	drv.mu.Lock()
	never := drv.dirty + 1000 // a change nobody makes: no save ever reaches it
	drv.mu.Unlock()
	got := make(chan error, 1)
	go func() { got <- drv.commit(t.Context(), never) }()
	time.Sleep(50 * time.Millisecond) // the commit waits
	stop := fmt.Errorf("master: the program died")
	drv.halt(stop)
	select {
	case err := <-got:
		if err != stop {
			t.Fatalf("commit returned %v, want the halt's error", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a commit waiting when the Driver halted still waits")
	}
}
