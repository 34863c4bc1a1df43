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

// tuneRuntime sets the collector of a process serving s. The limit is
// never below what the process holds once s is built plus limitHeadroom:
// the shard's floats are not all a process holds (gRPC, the etcd client,
// goroutine stacks: ~20 MiB), and for a small shard (the recommender's MLP,
// a few thousand floats) the shard's figure alone was under that, so the
// collector ran without end, capped by its CPU limiter at half the
// pserver's time (recommender bench: 60 % of the pserver's CPU in the
// collector, a step's pushes waiting on it). For a large shard the
// shard's figure is the larger and sets the limit, as before.
func tuneRuntime(s *Shard, log *slog.Logger) {
	params := 0
	for _, b := range s.blocks {
		params += len(b.param)
	}
	limit := int64(s.StateFloats()+params+s.copyMax)*4 + limitHeadroom
	held := heldMemory() + limitHeadroom
	debug.SetGCPercent(gcPercent)
	debug.SetMemoryLimit(max(limit, held))
	log.Info("memory limit set", "bytes", max(limit, held), "shard_bytes", limit, "held_bytes", held)
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
