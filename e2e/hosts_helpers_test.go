package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gtrain/gtrain/api"
	"github.com/gtrain/gtrain/internal/testing/netcluster"
	"github.com/gtrain/gtrain/internal/testing/specyaml"
	"github.com/gtrain/gtrain/jobspec"
)

// hostCluster is a 3-host cluster in network namespaces (internal/testing/netcluster)
// with a data directory every host reads: the housing shards, the jobs'
// specs and checkpoint.dir.
type hostCluster struct {
	*netcluster.Cluster
	shared string
}

// startHostCluster starts 3 hosts, a 3-member etcd (that lets the agents in
// by auth) and an agent per host. The agents reach their address three
// ways: a wildcard --api-addr (the first non-loopback address), the host of
// --api-addr, and --advertise-addr.
func startHostCluster(t *testing.T, auth netcluster.EtcdAuth) *hostCluster {
	t.Helper()
	if testing.Short() {
		t.Skip("starts a cluster of network namespaces")
	}
	if err := netcluster.Available(); err != nil {
		t.Skipf("SKIPPED, NOT TESTED: the multi-host cluster cannot run here: %v", err)
	}
	dir, err := os.MkdirTemp("", "gtrain-cluster-") // short: unix socket paths under it
	if err != nil {
		t.Fatal(err)
	}
	c, err := netcluster.New(netcluster.Options{Hosts: 3, Dir: dir, Bin: binDir, Etcd: auth})
	if err != nil {
		os.RemoveAll(dir)
		t.Fatal(err)
	}
	hc := &hostCluster{Cluster: c, shared: filepath.Join(dir, "shared")}
	t.Cleanup(func() { hc.close(t) })
	h := c.Hosts
	flags := [][]string{
		{"--api-addr", "0.0.0.0:" + netcluster.APIPort, "--gossip-addr", "0.0.0.0:7946"},
		{"--api-addr", h[1].IP + ":" + netcluster.APIPort, "--gossip-addr", h[1].IP + ":7946"},
		{"--advertise-addr", h[2].IP, "--api-addr", "0.0.0.0:" + netcluster.APIPort, "--gossip-addr", "0.0.0.0:7946"},
	}
	for i, host := range h {
		// Plaintext on purpose (these tests are about placement and
		// recovery); the TLS cluster is TestTLSCluster's.
		if _, err := c.StartAgent(host, append(flags[i], "--insecure")...); err != nil {
			t.Fatal(err)
		}
	}
	housing(t, filepath.Join(hc.shared, "data"))
	return hc
}

// close stops the cluster; after a failure it shows the logs first.
func (hc *hostCluster) close(t *testing.T) {
	if t.Failed() {
		for _, h := range hc.Hosts {
			logTail(t, filepath.Join(hc.Dir, h.Name, "agent.log"), 40)
			logs, _ := filepath.Glob(filepath.Join(hc.Dir, h.Name, "agent", "jobs", "*", "log", "*.log"))
			for _, l := range logs {
				logTail(t, l, 25)
			}
		}
	}
	hc.Close()
	if left := netcluster.Processes(hc.Dir); len(left) > 0 {
		t.Errorf("processes left behind by the cluster: %v", left)
	}
	if !t.Failed() {
		os.RemoveAll(hc.Dir)
	} else {
		t.Logf("cluster data and logs kept in %s", hc.Dir)
	}
}

func logTail(t *testing.T, path string, n int) {
	b, err := os.ReadFile(path)
	if err != nil {
		return
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	t.Logf("--- %s (last lines):\n%s", path, strings.Join(lines[max(0, len(lines)-n):], "\n"))
}

// gctl runs gctl against the agent of host i, from the client namespace.
func (hc *hostCluster) gctl(t *testing.T, i int, args ...string) (string, string, int) {
	t.Helper()
	out, errs, code, err := hc.Gctl(hc.Hosts[i].Agent.API, args...)
	if err != nil {
		t.Fatalf("gctl %v: %v", args, err)
	}
	return out, errs, code
}

// clusterPasses keeps a cluster job long enough to crash things in it
// (about 34 steps a pass) and short enough for the suite.
const clusterPasses = 30

// submit writes the spec on the shared directory and submits it detached
// through host i.
func (hc *hostCluster) submit(t *testing.T, i int, name string) {
	t.Helper()
	hc.submitSpec(t, i, hc.clusterJob(name))
}

// submitSpec writes s on the shared directory and submits it detached
// through host i.
func (hc *hostCluster) submitSpec(t *testing.T, i int, s jobspec.Spec) {
	t.Helper()
	startDetached(t, hc.on(i), s)
}

// writeSpec writes the job's spec on the shared directory, which every
// host reads.
func (hc *hostCluster) writeSpec(t *testing.T, s jobspec.Spec) string {
	t.Helper()
	spec := filepath.Join(hc.shared, s.Name+".yaml")
	if err := os.WriteFile(spec, []byte(specyaml.Marshal(s)), 0o644); err != nil {
		t.Fatal(err)
	}
	return spec
}

// clusterReference is the model of an uninterrupted run of clusterJob: a
// sync job's model does not depend on where its roles ran, so one run
// serves every cluster test of the package.
var clusterReference struct {
	sync.Mutex
	sums string
}

// referenceSums runs the reference job on hc the first time it is asked.
func (hc *hostCluster) referenceSums(t *testing.T) string {
	t.Helper()
	clusterReference.Lock()
	defer clusterReference.Unlock()
	if clusterReference.sums == "" {
		hc.submit(t, 0, "reference")
		st := waitJob(t, hc.on(0), "reference", "the reference run", 150*time.Second, succeeded)
		assertExact(t, st)
		clusterReference.sums = manifestSums(t, st.ModelDir)
	}
	return clusterReference.sums
}

func succeeded(st api.JobStatus) bool { return st.State == api.StateSucceeded }

// assertExact: every pass applied each training record exactly once.
func assertExact(t *testing.T, st api.JobStatus) {
	t.Helper()
	assertExactPasses(t, st, clusterPasses)
}

// assertExactPasses: the job SUCCEEDED after passes passes, each applying
// each training record exactly once.
func assertExactPasses(t *testing.T, st api.JobStatus, passes int) {
	t.Helper()
	if st.State != api.StateSucceeded || len(st.SamplesApplied) != passes {
		t.Errorf("job %s: state %s, samples_applied over %d passes, want SUCCEEDED over %d", st.Name, st.State, len(st.SamplesApplied), passes)
	}
	for p, n := range st.SamplesApplied {
		if n != 404 {
			t.Errorf("job %s pass %d: samples_applied %d, want 404 (exactly once)", st.Name, p, n)
		}
	}
}

// assertSameModel compares the job's final model with the reference, bit
// for bit.
func assertSameModel(t *testing.T, st api.JobStatus, ref string) {
	t.Helper()
	if sums := manifestSums(t, st.ModelDir); sums != ref {
		t.Errorf("job %s: final model differs from the uninterrupted run:\n got       %s\n reference %s", st.Name, sums, ref)
	}
}

// logEvents shows the job's events in the test log.
func logEvents(t *testing.T, st api.JobStatus) {
	t.Helper()
	for _, e := range st.Events {
		t.Logf("  %s  %s", e.Time.Format("15:04:05.000"), e.What)
	}
}
