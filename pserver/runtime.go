package pserver

import (
	"log/slog"
	"runtime/debug"
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

// tuneRuntime sets the collector of a process serving s.
func tuneRuntime(s *Shard, log *slog.Logger) {
	params := 0
	for _, b := range s.blocks {
		params += len(b.param)
	}
	limit := int64(s.StateFloats()+params+s.copyMax)*4 + limitHeadroom
	debug.SetGCPercent(gcPercent)
	debug.SetMemoryLimit(limit)
	log.Info("memory limit set", "bytes", limit)
}
