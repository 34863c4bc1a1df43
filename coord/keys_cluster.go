package coord

import "strings"

// Keys of the cluster's scheduling: a durable record of every node that
// ever joined (beside its leased liveness key, NodeKey, so that a dead node
// stays listed as down), the operator's drain marks, the scheduler's
// election, and per job the placement the scheduler decided and the agents'
// answers to its shared-storage check.

// ClusterPrefix holds the cluster-wide scheduling keys.
func ClusterPrefix() string { return Root + "cluster/" }

// NodeInfoPrefix holds one schema.NodeRecord per node that ever registered,
// written without a lease: it outlives the agent.
func NodeInfoPrefix() string { return ClusterPrefix() + "nodes/" }

// NodeInfoKey is the durable record of node.
func NodeInfoKey(node string) string { return NodeInfoPrefix() + node }

// DrainPrefix holds a schema.DrainRecord per node the operator drains.
func DrainPrefix() string { return ClusterPrefix() + "drain/" }

// DrainKey marks node as draining while it exists.
func DrainKey(node string) string { return DrainPrefix() + node }

// SchedulerElectionPrefix is the election whose leader is the cluster's
// scheduler; every placement it writes is fenced on its leadership.
func SchedulerElectionPrefix() string { return ClusterPrefix() + "scheduler/election" }

// PlacementKey holds the job's PlacementRecord: where each worker runs.
func PlacementKey(job string) string { return JobPrefix(job) + "placement" }

// StoragePrefix holds the agents' StorageResults of the job's
// shared-storage checks, one key per node.
func StoragePrefix(job string) string { return JobPrefix(job) + "storage/" }

// StorageKey is node's answer to the job's current storage check.
func StorageKey(job, node string) string { return StoragePrefix(job) + node }

// ParseDrainKey returns the node a key written by DrainKey drains.
func ParseDrainKey(key string) (node string, ok bool) {
	node, ok = strings.CutPrefix(key, DrainPrefix())
	if !ok || node == "" || strings.Contains(node, "/") {
		return "", false
	}
	return node, true
}
