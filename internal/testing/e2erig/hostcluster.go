package e2erig

import (
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/gtrain/gtrain/api"
	"github.com/gtrain/gtrain/internal/testing/netcluster"
	"github.com/gtrain/gtrain/internal/testing/specyaml"
	"github.com/gtrain/gtrain/jobspec"
)

// Host is the host named node; it fails the test when there is none.
func (hc *HostCluster) Host(t *testing.T, node string) *netcluster.Host {
	t.Helper()
	i := slices.IndexFunc(hc.Hosts, func(h *netcluster.Host) bool { return h.Name == node })
	if i < 0 {
		t.Fatalf("node %q is none of the cluster's hosts", node)
	}
	return hc.Hosts[i]
}

// PserverHostBesides is a host other than spare that runs a pserver.
func (hc *HostCluster) PserverHostBesides(t *testing.T, st api.JobStatus, spare string) *netcluster.Host {
	t.Helper()
	for _, ps := range st.Pservers {
		if ps.Node != spare {
			return hc.Host(t, ps.Node)
		}
	}
	t.Fatalf("every pserver runs on %s: %+v", spare, st.Pservers)
	return nil
}

// WaitNodeDown requires node to show down in `gctl node list` within limit
// of since.
func (hc *HostCluster) WaitNodeDown(t *testing.T, node string, since time.Time, limit time.Duration) {
	t.Helper()
	for {
		var nodes []api.NodeRow
		JSONOf(t, hc.On(0), &nodes, "node", "list")
		i := slices.IndexFunc(nodes, func(n api.NodeRow) bool { return n.Name == node })
		if i >= 0 && nodes[i].State == api.NodeDown {
			t.Logf("node %s down %s after the crash", node, time.Since(since).Round(10*time.Millisecond))
			return
		}
		if time.Since(since) > limit {
			t.Fatalf("node %s not down %s after the crash: %+v (it must stay listed, as down)", node, limit, nodes)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// HostCluster is a 3-host cluster in network namespaces (internal/testing/netcluster)
// with a data directory every host reads: the housing shards, the jobs'
// specs and checkpoint.dir.
type HostCluster struct {
	*netcluster.Cluster
	Shared string
}

// StartHostCluster starts 3 hosts, a 3-member etcd (that lets the agents in
// by auth) and an agent per host. The agents reach their address three
// ways: a wildcard --api-addr (the first non-loopback address), the host of
// --api-addr, and --advertise-addr.
func StartHostCluster(t *testing.T, auth netcluster.EtcdAuth) *HostCluster {
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
	c, err := netcluster.New(netcluster.Options{Hosts: 3, Dir: dir, Bin: BinDir, Etcd: auth})
	if err != nil {
		os.RemoveAll(dir)
		t.Fatal(err)
	}
	hc := &HostCluster{Cluster: c, Shared: filepath.Join(dir, "shared")}
	t.Cleanup(func() { hc.Shutdown(t) })
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
	Housing(t, filepath.Join(hc.Shared, "data"))
	return hc
}

// Shutdown stops the cluster; after a failure it shows the logs first.
func (hc *HostCluster) Shutdown(t *testing.T) {
	if t.Failed() {
		for _, h := range hc.Hosts {
			LogTail(t, filepath.Join(hc.Dir, h.Name, "agent.log"), 40)
			logs, _ := filepath.Glob(filepath.Join(hc.Dir, h.Name, "agent", "jobs", "*", "log", "*.log"))
			for _, l := range logs {
				LogTail(t, l, 25)
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

// GctlOn runs gctl against the agent of host i, from the client namespace.
func (hc *HostCluster) GctlOn(t *testing.T, i int, args ...string) (string, string, int) {
	t.Helper()
	out, errs, code, err := hc.Gctl(hc.Hosts[i].Agent.API, args...)
	if err != nil {
		t.Fatalf("gctl %v: %v", args, err)
	}
	return out, errs, code
}

// ClusterPasses keeps a cluster job long enough to crash things in it
// (about 34 steps a pass) and short enough for the suite.
const ClusterPasses = 30

// Submit writes the spec on the shared directory and submits it detached
// through host i.
func (hc *HostCluster) Submit(t *testing.T, i int, name string) {
	t.Helper()
	hc.SubmitSpec(t, i, hc.ClusterJob(name))
}

// SubmitSpec writes s on the shared directory and submits it detached
// through host i.
func (hc *HostCluster) SubmitSpec(t *testing.T, i int, s jobspec.Spec) {
	t.Helper()
	StartDetached(t, hc.On(i), s)
}

// WriteSpec writes the job's spec on the shared directory, which every
// host reads.
func (hc *HostCluster) WriteSpec(t *testing.T, s jobspec.Spec) string {
	t.Helper()
	spec := filepath.Join(hc.Shared, s.Name+".yaml")
	if err := os.WriteFile(spec, []byte(specyaml.Marshal(s)), 0o644); err != nil {
		t.Fatal(err)
	}
	return spec
}

// ClusterReference is the model of an uninterrupted run of ClusterJob: a
// sync job's model does not depend on where its roles ran, so one run
// serves every cluster test of the package.
var ClusterReference struct {
	sync.Mutex
	Sums string
}

// ReferenceSums runs the reference job on hc the first time it is asked.
func (hc *HostCluster) ReferenceSums(t *testing.T) string {
	t.Helper()
	ClusterReference.Lock()
	defer ClusterReference.Unlock()
	if ClusterReference.Sums == "" {
		hc.Submit(t, 0, "reference")
		st := WaitJob(t, hc.On(0), "reference", "the reference run", 150*time.Second, Succeeded)
		AssertExact(t, st)
		ClusterReference.Sums = ManifestSums(t, st.ModelDir)
	}
	return ClusterReference.Sums
}
