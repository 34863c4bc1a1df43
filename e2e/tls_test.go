package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gtrain/gtrain/api"
	"github.com/gtrain/gtrain/internal/testing/e2erig"
	"github.com/gtrain/gtrain/internal/testing/netcluster"
	"github.com/gtrain/gtrain/internal/testing/specyaml"
	"github.com/gtrain/gtrain/jobspec"
	"github.com/gtrain/gtrain/pki"
)

// TestTLSCluster (issue 10): two hosts whose agents run with node
// certificates from `gtraind cert` and an encrypted gossip ring. gctl with
// an operator's client certificate trains fit-a-line to SUCCEEDED; the
// job's pservers serve mutual TLS on their host's address; a plaintext
// gctl and one trusting another CA cannot connect; the job's master and
// pservers refuse every caller but the job's own roles (issue 19), and the
// job still applies every record exactly once.
func TestTLSCluster(t *testing.T) {
	hc := startTLSCluster(t)
	var nodes []api.NodeRow
	e2erig.JSONOf(t, hc.On(0), &nodes, "node", "list")
	if len(nodes) != 2 {
		t.Fatalf("node list: %+v, want 2 nodes", nodes)
	}
	spec := filepath.Join(hc.Shared, "tls.yaml")
	if err := os.WriteFile(spec, []byte(specyaml.Marshal(fitALineJob("tls", jobspec.ModeSync, 40, filepath.Join(hc.Shared, "data")))), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, errs, code := hc.GctlOn(t, 1, "job", "start", "-f", spec, "--detach"); code != 0 {
		t.Fatalf("job start: exit %d: %s", code, errs)
	}
	st := e2erig.WaitJob(t, hc.On(0), "tls", "the pservers serving", 60*time.Second, func(st api.JobStatus) bool {
		return st.Step > 0 && len(st.Pservers) == 2 && st.Pservers[0].Addr != "" && st.Pservers[1].Addr != ""
	})
	hc.AssertDataPlaneRefuses(t, "tls", st.Pservers[0].Addr)
	hc.AssertRefused(t)
	hc.AssertRolesChecked(t, "tls")
	st = e2erig.WaitJob(t, hc.On(0), "tls", "the job to finish", 90*time.Second, e2erig.Succeeded)
	e2erig.AssertExactPasses(t, st, 40)
	if e2erig.CountEvents(st, "job submitted by alice (operator)") != 1 {
		t.Errorf("no event records that alice (operator) submitted the job: %+v", st.Events)
	}
}

// startTLSCluster makes the PKI with the gtraind binary and starts an agent
// per host with --tls-* and --gossip-key; gctl uses alice (operator).
func startTLSCluster(t *testing.T) *e2erig.HostCluster {
	t.Helper()
	if testing.Short() {
		t.Skip("starts a cluster of network namespaces")
	}
	if err := netcluster.Available(); err != nil {
		t.Skipf("SKIPPED, NOT TESTED: the multi-host cluster cannot run here: %v", err)
	}
	dir, err := os.MkdirTemp("", "gtrain-tls-") // short: unix socket paths under it
	if err != nil {
		t.Fatal(err)
	}
	c, err := netcluster.New(netcluster.Options{Hosts: 2, Dir: dir, Bin: e2erig.BinDir, Etcd: netcluster.EtcdPlain})
	if err != nil {
		os.RemoveAll(dir)
		t.Fatal(err)
	}
	hc := &e2erig.HostCluster{Cluster: c, Shared: filepath.Join(dir, "shared")}
	t.Cleanup(func() { hc.Shutdown(t) })
	certs := filepath.Join(dir, "pki")
	e2erig.CertCmd(t, "init", "--dir", certs)
	e2erig.CertCmd(t, "issue", "--dir", certs, "--client", "alice", "--role", "operator")
	c.GctlConfig = e2erig.GctlConfig(t, dir, "tls", certs, "alice")
	for _, h := range c.Hosts {
		e2erig.CertCmd(t, "issue", "--dir", certs, "--node", h.Name, "--addr", h.IP)
		if _, err := c.StartAgent(h, "--api-addr", h.IP+":"+netcluster.APIPort, "--gossip-addr", h.IP+":7946",
			"--tls-ca", filepath.Join(certs, pki.CACertFile), "--tls-cert", pki.CertPath(certs, h.Name),
			"--tls-key", pki.KeyPath(certs, h.Name), "--gossip-key", "@"+filepath.Join(certs, pki.GossipKeyFile)); err != nil {
			t.Fatal(err)
		}
	}
	e2erig.Housing(t, filepath.Join(hc.Shared, "data"))
	return hc
}

// An agent whose API is off loopback without TLS refuses to start (exit 2)
// and says how to fix it.
func TestPlainAgentOffLoopbackRefuses(t *testing.T) {
	cmd := exec.Command(filepath.Join(e2erig.BinDir, "gtraind"), "agent", "--dev", "--data-dir", t.TempDir(),
		"--api-addr", "0.0.0.0:0", "--etcd-client-addr", "127.0.0.1:0", "--etcd-peer-addr", "127.0.0.1:0")
	out, err := cmd.CombinedOutput()
	if cmd.ProcessState == nil || cmd.ProcessState.ExitCode() != 2 || !strings.Contains(string(out), "--insecure") ||
		!strings.Contains(string(out), "--tls-ca") {
		t.Errorf("plain agent on 0.0.0.0: %v\n%s\nwant exit 2 naming --tls-ca and --insecure", err, out)
	}
}
