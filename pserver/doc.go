// Package pserver holds one shard of a job's parameters and applies the
// optimizer to the gradients trainers push.
//
// Pure parts, unit-tested without sockets or etcd: partition.go (blocks spread
// evenly over pservers by size), optimizer.go (sgd, momentum, adagrad, adam,
// elementwise per block), shard.go (the step logic: sync mode waits for every
// trainer's gradient of a step and applies their record-weighted mean summed
// in trainer-ID order, so the result does not depend on arrival order; async
// mode applies each push at once). The edges: server.go (gRPC, raw
// little-endian float32 bytes), client.go (what trainers and the master use),
// run.go (the `gtraind pserver` process: etcd registration under a lease,
// claimed only if free so one index is never served twice).
//
// It must not decide what data is trained on (the master does) nor compute
// gradients (the trainer does).
package pserver
