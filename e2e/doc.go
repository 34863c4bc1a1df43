// Package e2e holds the tests that prove the mission with real parts: an
// embedded etcd, gRPC on loopback, and (in process_test.go) real gtraind
// processes. It has no non-test code of its own beyond test helpers.
//
// One rig drives both kinds of cluster (cluster_rig_test.go): the agents
// on this host and the hosts in network namespaces implement cluster, and
// a test starts jobs, reads and waits on their status the same way on
// either. Jobs are jobspec values (jobs_test.go), written as documents by
// internal/testing/specyaml; waits go through internal/testing/wait.
package e2e
