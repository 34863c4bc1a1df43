// Package pserver holds one shard of a job's parameters and applies the
// optimizer to the gradients trainers push. Other roles reach it through
// pserver/client, never by importing this package.
//
// Pure parts, unit-tested without sockets, etcd or a clock: optimizer.go
// (sgd, momentum, adagrad, adam, elementwise per block), shard.go (the step
// logic: sync mode gathers every micro-batch's gradient of a step and
// applies their record-weighted mean summed in micro-batch order
// (microbatch.go), so the result depends neither on arrival order nor on
// which or how many trainers computed them; async mode applies each push at
// once), snapshot.go (a checkpoint's view of the shard at one step, copied
// only where a step changes it before it is written; and restores),
// table.go and tables.go (embedding tables, the sparse issue: rows keyed by
// 64-bit ids, created on first update from (seed, table, id), updated
// lazily; a sync micro-batch's rows come before its dense push, or in its
// first message (PushPullRows, PushWithRows), and are applied with it, in
// micro-batch order; checkpoints copy them, mostly only the rows changed
// since the previous checkpoint: rowdelta.go). The
// Shard neither reads a clock nor blocks: a push that would change values a
// snapshot has not saved is refused (ErrSnapshotUnsaved) until its caller
// preserves them. driver.go is that caller's part, tested with the fake
// clock of internal/clock: it holds a push while the checkpoint writer is
// too far behind (bounding the copy, up to writerWaitMax for a stuck disk),
// preserves, and times the pause a snapshot costs; the process injects its
// clock (Config.Clock). The
// edges: server.go, server_rows.go and pushsink.go (gRPC; the wire contract is pserver/wire),
// pushpull.go (a sync push that answers, once its step is applied, with the
// next step's parameters: one call per micro-batch instead of a push and a
// pull; a trainer of the same host moves both through a shared-memory
// region it attached, pserver/region, the messages only naming it:
// pushsink.go reads a chunk out of it, sendParamsVia writes the parameters
// into it; localsocket.go serves the regions' socket beside the local one),
// and the `gtraind pserver` process: process.go (Run, in named steps),
// registration.go (etcd registration under a lease, claimed only if free so
// one index is never served twice), restore.go (where a restarted shard
// continues from: only files whose sha256 matches their etcd record),
// checkpointer.go (writing checkpoints and marking each step with its
// file's sha256),
// runtime.go (the collector's settings for a process that is one pserver),
// reshard.go (a re-shard: the process serves one layout generation after
// another, restoring the first step of a new one with recut.go's Recut, the
// pure re-cutting of the old generation's checkpoint sections, and
// recut_rows.go's RecutRows, the same for embedding rows: each goes to the
// pserver client.RowOwner names under the new count).
//
// Three counters, one name each: a step is the count of updates applied; the
// rollback epoch is the master's count of rollbacks, carried by every push,
// pull and restore (the wire's "epoch" fields), so requests of an older one
// are refused; the restore count is this shard's own count of value
// replacements, so a pull waiting across one aborts.
//
// It must not decide what data is trained on (the master does), compute
// gradients (the trainer does), nor build etcd keys (coord does) or job
// paths (internal/jobdir does).
package pserver
