// Package e2erig is the rig of the end-to-end tests (e2e and e2e/endurance):
// real gtraind agents as processes on this host (Agent) or on hosts in
// network namespaces (HostCluster, over internal/testing/netcluster), one
// Cluster interface through which a test starts a job and waits on its
// status on either, the jobs they run (jobspec values), and the checks the
// tests share: every record applied once, the uninterrupted run's model,
// the roles that restarted.
//
// It owns no behaviour of gtrain: it drives the binaries gctl and gtraind
// (BinDir) as an operator would. It must not import the packages under
// test beyond their public records (api, jobspec, model manifests) and
// dataset's converter of the test data, so that a test proves what a user
// sees.
package e2erig
