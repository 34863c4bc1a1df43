package pserver

import (
	"context"
	"fmt"
	"runtime/debug"
	"time"

	"github.com/gtrain/gtrain/jobspec"
)

// tableMemoryWarnAt is the share of the memory request past which a
// pserver whose tables grow says so in status (its process is killed at
// the request: a table has no declared size to refuse it by at submit).
const tableMemoryWarnAt = 0.8

// tableWatchEvery is how often watchTables looks at the tables.
const tableWatchEvery = time.Second

// watchTables follows the shard's embedding tables as they grow, one look
// a tick for both of its jobs:
//   - the soft memory limit set at start (base; 0: the process does not own
//     its runtime) rises with them: a table has no declared size, so a
//     limit of the dense state alone would bind once rows outgrow it, and
//     the collector would run without end (the limiter lets it take half
//     the CPU). Table.Bytes estimates the index at 16 bytes an entry, under
//     what a Go map takes (and twice that while it grows): the limit counts
//     the tables 1.5 times;
//   - status carries a memory warning while the dense state and tables
//     hold more than tableMemoryWarnAt of resources.pserver.memory
//     (request; 0: none stated), cleared when they no longer do.
func (p *process) watchTables(ctx context.Context, base, request int64) {
	tick := p.clock.NewTicker(tableWatchEvery)
	defer tick.Stop()
	limit := base
	for {
		select {
		case <-tick.C():
		case <-ctx.Done():
			return
		}
		tables, rows := p.shard.TableBytes()
		if next := base + tables*3/2; base > 0 && next != limit {
			debug.SetMemoryLimit(next)
			limit = next
		}
		if request > 0 {
			p.warnTableMemory(ctx, tableMemoryWarning(p.name, int64(p.shard.StateFloats())*4+tables, tables, rows, request))
		}
	}
}

// warnTableMemory puts warning in the pserver's record, publishing it when
// it changed.
func (p *process) warnTableMemory(ctx context.Context, warning string) {
	p.recMu.Lock()
	changed := p.record.MemoryWarning != warning
	p.record.MemoryWarning = warning
	p.recMu.Unlock()
	if !changed {
		return
	}
	if warning != "" {
		p.log.Warn("embedding tables near the memory request", "warning", warning)
	}
	if err := p.publish(ctx); err != nil {
		p.log.Warn("cannot publish the memory warning", "err", err)
	}
}

// tableMemoryWarning is the warning for a pserver holding used bytes, of
// which tables in rows rows, against its memory request ("" under the
// warning share).
func tableMemoryWarning(name string, used, tables int64, rows int, request int64) string {
	if float64(used) < tableMemoryWarnAt*float64(request) {
		return ""
	}
	return fmt.Sprintf("%s holds %s (embedding tables: %d rows, %s), %.0f%% of resources.pserver.memory %s: it is killed past it; resume the job with more (gctl job stop, then gctl job resume --resources pserver.memory=...)",
		name, jobspec.FormatMemory(used), rows, jobspec.FormatMemory(tables), 100*float64(used)/float64(request), jobspec.FormatMemory(request))
}
