// Package e2e holds the tests that prove the mission with real parts: an
// embedded etcd, gRPC on loopback, and real gtraind processes, on this host
// and on hosts in network namespaces. It has no non-test code.
//
// The rig is internal/testing/e2erig, shared with e2e/endurance (the tests
// whose clusters mostly wait, run beside this package): the agents on this
// host and the hosts in network namespaces implement e2erig.Cluster, and a
// test starts jobs, reads and waits on their status the same way on either.
// Jobs are jobspec values (e2erig's jobs.go and this package's
// jobs_test.go), written as documents by internal/testing/specyaml; waits
// go through internal/testing/wait. Every test here runs alone.
package e2e
