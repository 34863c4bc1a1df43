// Package netcluster runs a gtrain cluster of several hosts on one machine:
// each host is a network namespace of its own with an address on a bridge,
// running one member of a real etcd cluster (Debian's etcd-server, see
// internal/testing/etcdproc) and one `gtraind agent`. The namespaces share the
// file system, which stands for the shared storage of checkpoint.dir.
//
// Everything lives in namespaces the cluster creates: the bridge sits in a
// namespace of its own, and the test's own view (gctl, an etcd client, a
// gRPC client) comes from a client namespace on the same bridge, so no
// address or route is added to the machine's own network. It needs root.
//
// The e2e tests of the cluster issue and the recovery_node benchmark use it;
// deploy/netns-cluster.sh does the same by hand, for trying gtrain out.
package netcluster
