// Package schema holds the records gtrain stores in etcd (under the keys
// package coord lays out) and their JSON encodings: what a node, a job, its
// state, placement, workers, pservers, trainers, progress, checkpoints and
// layout look like, and a user's quota. It is pure data, so that the pure cores (master/core,
// the scheduler's placement, status) use a record without importing an
// etcd client.
//
// It owns the record types and their decoding. It must not import an etcd
// or gRPC client, build keys (coord does) or do IO.
package schema
