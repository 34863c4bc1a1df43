package pserver

import (
	"log/slog"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
)

// A pserver's heap is mostly its shard, a few large slices of floats that
// hold no pointers and cost the collector nearly nothing to keep; the rest
// is garbage, the message buffers of pushes and pulls. Go's default (a
// collection when the heap doubled) lets that garbage grow as large as the
// shard, doubling resident memory. So a pserver process collects when its
// heap grew by gcPercent, and keeps under a soft limit: what it may hold
// at once (the shard, one pushed gradient, a snapshot's copy bounded by
// ShardConfig.SnapshotCopyMax) plus limitHeadroom, so that garbage never
// adds up beyond that however large a copy a slow disk forced. With 16 MiB
// a 5.8 M-parameter Adam shard peaks at 152-154 MiB resident (the binary's
// pages and the runtime add ~25 MiB), under 1.5x its state + 64 MiB; 8 MiB
// saved 2 MiB for 15% fewer steps (the collector ran all the time).
const (
	gcPercent     = 10
	limitHeadroom = 16 << 20
)

// TuneCollector sets the collector as a pserver process has it (a
// collection each time the heap grew by gcPercent), for a process that
// measures a pserver's structures in isolation (bench sparse_memory).
func TuneCollector() { debug.SetGCPercent(gcPercent) }

// minLimit is the least soft limit: the memory allowance a pserver has
// over its state (goal: 1.5x its state + 64 MiB). The shard's figure
// counts its floats, not what the process holds besides (gRPC, the etcd
// client, the runtime's spans: the recommender bench's pserver, whose MLP
// is a few thousand floats, held 9.5 MiB once built and ~25 MiB with its
// garbage when serving). For such a shard the shard's figure (16.8 MiB)
// was under that, so the collector ran without end, capped by its CPU
// limiter at half the pserver's time (60 % of its CPU in the collector, a
// step's pushes waiting on it; 7,145 records/s); with the limit at what
// it held once built + 16 MiB it still bound (a collection each 20 ms).
const minLimit = 64 << 20

// tuneRuntime sets the collector of a process serving s. A shard whose
// figure is over minLimit is collected as before; a smaller one under
// minLimit, each time limitHeadroom of garbage added up (collectPercent).
func tuneRuntime(s *Shard, log *slog.Logger) int64 {
	params := 0
	for _, b := range s.blocks {
		params += len(b.param)
	}
	limit, percent := int64(s.StateFloats()+params+s.copyMax)*4+limitHeadroom, gcPercent
	if limit < minLimit {
		limit, percent = minLimit, collectPercent(heldMemory())
	}
	debug.SetGCPercent(percent)
	debug.SetMemoryLimit(limit)
	log.Info("memory limit set", "bytes", limit, "gc_percent", percent)
	return limit
}

// collectPercent is the growth of a heap of held bytes that lets
// limitHeadroom of garbage add up, not gcPercent of a small heap (a 10 MiB
// heap collected each 1 MiB of garbage: the recommender bench's pserver
// spent 14 % of its CPU in the collector with gcPercent alone).
func collectPercent(held int64) int {
	if held <= 0 {
		return gcPercent
	}
	return int(max(gcPercent, 100*limitHeadroom/held))
}

// heldMemory is the memory the Go runtime holds after a collection: the
// measure the soft limit compares with (all the runtime's memory less the
// heap it gave back to the system).
func heldMemory() int64 {
	runtime.GC()
	m := []metrics.Sample{{Name: "/memory/classes/total:bytes"}, {Name: "/memory/classes/heap/released:bytes"}}
	metrics.Read(m)
	return int64(m[0].Value.Uint64()) - int64(m[1].Value.Uint64())
}
