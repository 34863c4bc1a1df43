package pserver

import (
	"context"
	"fmt"
	"time"

	"github.com/gtrain/gtrain/jobspec"
)

// tableMemoryWarnAt is the share of the memory request past which a
// pserver whose tables grow says so in status (its process is killed at
// the request: a table has no declared size to refuse it by at submit).
const tableMemoryWarnAt = 0.8

// tableMemoryEvery is how often the watch looks.
const tableMemoryEvery = 2 * time.Second

// watchTableMemory publishes a memory warning while the shard's dense
// state and tables hold more than tableMemoryWarnAt of
// resources.pserver.memory, and clears it when they no longer do.
func (p *process) watchTableMemory(ctx context.Context) {
	request, err := p.spec.Resources.Pserver.MemoryBytes()
	if err != nil || request <= 0 {
		return
	}
	tick := p.clock.NewTicker(tableMemoryEvery)
	defer tick.Stop()
	for {
		select {
		case <-tick.C():
		case <-ctx.Done():
			return
		}
		tables, rows := p.shard.TableBytes()
		warning := tableMemoryWarning(p.name, int64(p.shard.StateFloats())*4+tables, tables, rows, request)
		p.recMu.Lock()
		changed := p.record.MemoryWarning != warning
		p.record.MemoryWarning = warning
		p.recMu.Unlock()
		if changed {
			if warning != "" {
				p.log.Warn("embedding tables near the memory request", "warning", warning)
			}
			if err := p.publish(ctx); err != nil {
				p.log.Warn("cannot publish the memory warning", "err", err)
			}
		}
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
