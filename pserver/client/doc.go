// Package client is how the other roles reach a job's pservers without
// importing the server: the layout every role derives identically from the
// job spec (layout.go; partition.go cuts the parameters into blocks spread
// evenly over the pservers by size), the gRPC client that scatters gradients
// and gathers parameters block by block (client.go, push.go, pull.go; a
// PushPull to a pserver of this host copies them through a shared-memory
// region instead, regions.go: a refused region sends the pushes through the
// socket, and one the pserver lost fails the push as Unavailable, retried
// with another), and
// discovery of the pservers' addresses in etcd, reconnecting when a restarted
// pserver comes back elsewhere (discover.go, dynamic.go), and following the
// job's layout generation after a re-shard (dynamic_layout.go: only
// registrations of the generation in use count, and the blocks are cut anew
// for its pserver count).
//
// Partition and Layout are pure and unit-tested; the transport (codec, gRPC
// options, message size) is pserver/wire's, shared with the server.
//
// It must not hold parameters or apply the optimizer (the server does), nor
// decide when to push, pull or roll back (the trainer and the master do).
// Numbers it carries are opaque to it: a step is the count of applied
// updates, a rollback epoch is the master's count of rollbacks.
package client
