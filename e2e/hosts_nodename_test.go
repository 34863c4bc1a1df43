package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/gtrain/gtrain/internal/testing/e2erig"
	"github.com/gtrain/gtrain/internal/testing/netcluster"
)

// TestClusterDuplicateNodeName (issue 8, scenario 6): two hosts, each
// agent in a PID namespace of its own, the second given the first one's
// --node-name. The first agent's PID is dead in the second's namespace, and
// that must not get its lease revoked: the second agent waits one TTL for
// the name, then exits 2 with an error naming the holder, and the first
// keeps its registration (same lease) and stays ready throughout.
//
// h1's agent runs in the machine's PID namespace, h2's in a new one: were
// both in new namespaces, both agents would be PID 1, alive in either
// namespace, and the PID check would hide the bug this test is for.
func TestClusterDuplicateNodeName(t *testing.T) {
	if _, err := exec.LookPath("unshare"); err != nil {
		t.Skipf("SKIPPED, NOT TESTED: no unshare (util-linux): %v", err)
	}
	hc := startTwoHosts(t)
	h1, h2 := hc.Hosts[0], hc.Hosts[1]
	first, err := hc.StartAgent(h1, "--api-addr", h1.IP+":"+netcluster.APIPort, "--gossip-addr", h1.IP+":7946", "--insecure")
	if err != nil {
		t.Fatal(err)
	}
	cli, err := hc.EtcdClient(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	rec, lease := e2erig.NodeRecord(t, cli, "h1")
	if rec.Host == "" || rec.PID <= 0 {
		t.Fatalf("node record of h1 = %+v: want its pid and host", rec)
	}

	h2.OwnPIDNamespace = true
	second, err := hc.LaunchAgent(h2, "--node-name", "h1", "--api-addr", h2.IP+":"+netcluster.APIPort, "--gossip-addr", h2.IP+":7946", "--insecure")
	if err != nil {
		t.Fatal(err)
	}
	hc.AssertHolderKept(t, cli, first, lease, second.Exited(), 30*time.Second)
	if code := second.ExitCode(); code != 2 {
		t.Errorf("second agent exit code %d, want 2", code)
	}
	log, _ := os.ReadFile(second.LogPath)
	want := fmt.Sprintf(`node name "h1" is held by a live agent (pid %d on host %s, api %s:%s); give this agent another --node-name, or stop that one`,
		rec.PID, rec.Host, h1.IP, netcluster.APIPort)
	if !strings.Contains(string(log), want) {
		t.Errorf("second agent's log lacks %q:\n%s", want, log)
	}
	// Some seconds more, longer than a TTL: nothing of the refused agent
	// takes the name late.
	later := make(chan struct{})
	time.AfterFunc(6*time.Second, func() { close(later) })
	hc.AssertHolderKept(t, cli, first, lease, later, 0)
}

// startTwoHosts is a 2-host cluster (plain etcd) with no agent yet.
func startTwoHosts(t *testing.T) *e2erig.HostCluster {
	t.Helper()
	if testing.Short() {
		t.Skip("starts a cluster of network namespaces")
	}
	if err := netcluster.Available(); err != nil {
		t.Skipf("SKIPPED, NOT TESTED: the multi-host cluster cannot run here: %v", err)
	}
	dir, err := os.MkdirTemp("", "gtrain-cluster-")
	if err != nil {
		t.Fatal(err)
	}
	c, err := netcluster.New(netcluster.Options{Hosts: 2, Dir: dir, Bin: e2erig.BinDir, Etcd: netcluster.EtcdPlain})
	if err != nil {
		os.RemoveAll(dir)
		t.Fatal(err)
	}
	hc := &e2erig.HostCluster{Cluster: c}
	t.Cleanup(func() { hc.Shutdown(t) })
	return hc
}
