// Package coord is gtrain's plumbing to etcd and to the gossip ring: the
// embedded single-node etcd of `gtraind agent --dev`, the client of an
// external etcd (EtcdConfig: endpoints, TLS files, user), the etcd key
// layout and the JSON records stored under it (their types are in
// coord/schema, which links no etcd client, with their decoders; a whole
// job is read by DecodeJobs into a JobView, the cluster's nodes by
// ReadNodes), leadership with fenced writes
// (concurrency.Election; a commit cut by a member's death is sent again),
// and hashicorp/memberlist for fast failure detection.
//
// It owns where things live in etcd and how they are encoded. It must not
// hold training logic (queues, optimizers, models) nor read configuration
// files or flags: callers pass everything in.
package coord
