package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/gtrain/gtrain/bench"
	"github.com/gtrain/gtrain/internal/testing/netcluster"
	"github.com/gtrain/gtrain/pserver"
)

func measurePushPull(t *table, sz sizes) error {
	one, err := best(3, func() (float64, error) { return bench.TCPLoopbackMBps(2<<30, 1) })
	if err != nil {
		return err
	}
	four, err := best(3, func() (float64, error) { return bench.TCPLoopbackMBps(2<<30, 4) })
	if err != nil {
		return err
	}
	tcp := max(one, four)
	pp, err := best(3, func() (float64, error) { return bench.PushPullMBps(sz.model, 2, 2, sz.steps) })
	if err != nil {
		return err
	}
	t.add(bench.Result{Name: "pserver_pushpull", Value: pp, Unit: "MB/s", Ceiling: tcp,
		Note: fmt.Sprintf("2 pservers, 2 trainers, sync; ceiling: raw TCP loopback, best of 1 stream (%.0f MB/s) and 4 streams at once (%.0f MB/s)", one, four)})
	return nil
}

// measureOptimizers compares each optimizer's update loop with a
// STREAM-style loop of the same memory traffic per parameter.
func measureOptimizers(t *table, sz sizes) error {
	for _, kind := range []string{"sgd", "adam"} {
		ceiling, pps, err := bestInterleaved(5,
			func() (float64, error) { return bench.StreamCeiling(kind, sz.model, 10) },
			func() (float64, error) { return pserver.MeasureOptimizer(kind, sz.model, 10) })
		if err != nil {
			return err
		}
		t.add(bench.Result{Name: "optimizer_" + kind, Value: pps, Unit: "params/s", Ceiling: ceiling,
			Note: "ceiling: STREAM-style loop with the same reads and writes per parameter (" + streamNote[kind] + "), same vector width"})
	}
	return nil
}

var streamNote = map[string]string{"sgd": "read p, g; write p", "adam": "read p, g, m, v; write p, m, v"}

func measureDispatch(t *table, sz sizes) error {
	e, err := bench.StartEtcd()
	if err != nil {
		return err
	}
	defer e.Close()
	serial, err := bench.SerialTxnPerSec(e, sz.dispatchTasks)
	if err != nil {
		return err
	}
	d1, err := bench.DispatchPerSec(e, "dispatch-1", sz.dispatchTasks, 1)
	if err != nil {
		return err
	}
	t.add(bench.Result{Name: "master_dispatch_1", Value: d1, Unit: "tasks/s", Ceiling: serial, Note: "ceiling: serial fenced etcd txn/s"})
	par, err := bench.ParallelPutPerSec(e, 4*sz.dispatchTasks, 64)
	if err != nil {
		return err
	}
	group, err := best(3, func() (float64, error) { return bench.GroupCommitPutPerSec(e, 4*sz.dispatchTasks, 64) })
	if err != nil {
		return err
	}
	d64, err := bench.DispatchPerSec(e, "dispatch-64", 4*sz.dispatchTasks, 64)
	if err != nil {
		return err
	}
	t.add(bench.Result{Name: "master_dispatch_64", Value: d64, Unit: "tasks/s", Ceiling: max(par, group),
		Note: fmt.Sprintf("ceiling: the best of 64-way etcd put/s (%.0f) and 64-way group-committed put/s (%.0f, the master's batching without the master); serial txn/s was %.0f", par, group, serial)})
	return nil
}

func measureCheckpoints(t *table, sz sizes) error {
	dir, err := os.MkdirTemp("", "gtrain-bench-ckpt")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	pause, copyMs, err := bench.CheckpointPause(sz.model, 20, dir)
	if err != nil {
		return err
	}
	t.add(bench.Result{Name: "checkpoint_pause", Value: pause, Unit: "ms", Ceiling: copyMs,
		Note: "lower is better: the longest a step waited for a checkpoint (the copy of what was left to write, and the wait for the disk while more than half the shard is left: the disk's pace when a checkpoint outruns it) in 20 sync steps with a checkpoint every other step (1 pserver, 1 trainer, real checkpoint files) / time to copy the shard in memory (target <= 1.5)"})
	without, with, err := bench.CheckpointThroughput(sz.model, sz.ckptRun, sz.ckptEvery, dir)
	if err != nil {
		return err
	}
	t.add(bench.Result{Name: "checkpoint_throughput", Value: with, Unit: "steps/s", Ceiling: without,
		Note: fmt.Sprintf("sync training (64 MiB model, 2x2) with a checkpoint every %s vs none, %s runs alternated twice, best of each; target ratio >= 0.965", sz.ckptEvery, sz.ckptRun)})
	return nil
}

func measureRecovery(t *table, bin string) error {
	rec, err := bench.MeasureRecovery(bin, "examples/data/uci_housing/housing.data")
	if err != nil {
		return err
	}
	for _, r := range []struct {
		name string
		v    float64
	}{{"recovery_trainer", rec.Trainer}, {"recovery_pserver", rec.Pserver}, {"recovery_master", rec.Master}} {
		t.add(bench.Result{Name: r.name, Value: r.v, Unit: "s", Note: "SIGKILL to the next applied step; session TTL 5 s; absolute (no ceiling)"})
	}
	return nil
}

func measureNodeRecovery(t *table, bin string) error {
	v, err := bench.MeasureNodeRecovery(bin, "examples/data/uci_housing/housing.data")
	switch {
	case errors.Is(err, netcluster.ErrUnavailable):
		t.notMeasured("recovery_node", err.Error())
		return nil
	case err != nil:
		return err
	}
	t.add(bench.Result{Name: "recovery_node", Value: v, Unit: "s",
		Note: "host crash (agent and roles SIGKILLed, never restarted; it ran a pserver) to the next applied step, 3 hosts in network namespaces; absolute (no ceiling)"})
	return nil
}
