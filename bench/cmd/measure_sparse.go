package main

import (
	"fmt"
	"time"

	"github.com/gtrain/gtrain/bench"
)

// measureSparse: sparse_pull_push (through a pserver's gRPC server on
// loopback) and sparse_memory (the pserver's table in a process of its
// own), the sparse issue's.
func measureSparse(t *table, sz sizes) error {
	run, rows := 5*time.Second, bench.SparseVocab
	if sz.steps < 5 { // -quick
		run, rows = time.Second, bench.SparseVocab/10
	}
	p, err := bench.MeasureSparsePullPush(run)
	if err != nil {
		return err
	}
	t.add(bench.Result{Name: "sparse_pull_push", Value: p.RowsPerSec, Unit: "rows/s", Ceiling: p.GathersPerSec,
		Note: fmt.Sprintf("rows pulled then updated with adagrad (dimension 16, batches of 4,096 ids drawn Zipf-like, s = 1.1, from 10 M; %d rows stored at the end), through one pserver's gRPC server on loopback (async, in this process; PullRows then PushRows); ceiling: random 64-byte gathers from a 10 M-row array (640 MB), one core", p.Stored)})
	m, err := bench.MeasureSparseMemory(rows)
	if err != nil {
		return err
	}
	const mib = 1 << 20
	state := float64(int64(m.Rows) * m.RowBytes)
	goal := 1.5*state + 64*mib
	t.add(bench.Result{Name: "sparse_memory", Value: float64(m.PeakBytes) / state, Unit: "x rows", Ratio: float64(m.PeakBytes) / state,
		Note: fmt.Sprintf("lower is better: peak RSS (VmHWM) %.1f MiB of a process whose table holds %d touched rows (dimension 16, adagrad) / rows x (64 B values + 64 B sums + 8 B id) = %.1f MiB; goal <= 1.5x + 64 MiB = %.1f MiB (%.2fx). In process, not a pserver yet",
			float64(m.PeakBytes)/mib, m.Rows, state/mib, goal/mib, goal/state)})
	t.add(bench.Result{Name: "sparse_untouched_mib", Value: float64(m.Untouched) / mib, Unit: "MiB",
		Note: "VmHWM growth from declaring a table of 1 G rows and reading 1 M of them: untouched rows cost nothing (goal about 0)"})
	return nil
}
