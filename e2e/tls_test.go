package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/gtrain/gtrain/api"
	"github.com/gtrain/gtrain/internal/testing/netcluster"
	"github.com/gtrain/gtrain/internal/testing/specyaml"
	"github.com/gtrain/gtrain/jobspec"
	"github.com/gtrain/gtrain/pki"
)

// TestTLSCluster (issue 10): two hosts whose agents run with node
// certificates from `gtraind cert` and an encrypted gossip ring. gctl with
// an operator's client certificate trains fit-a-line to SUCCEEDED; the
// job's pservers serve mutual TLS on their host's address; a plaintext
// gctl and one trusting another CA cannot connect.
func TestTLSCluster(t *testing.T) {
	hc := startTLSCluster(t)
	var nodes []api.NodeRow
	jsonOf(t, hc.on(0), &nodes, "node", "list")
	if len(nodes) != 2 {
		t.Fatalf("node list: %+v, want 2 nodes", nodes)
	}
	spec := filepath.Join(hc.shared, "tls.yaml")
	if err := os.WriteFile(spec, []byte(specyaml.Marshal(fitALineJob("tls", jobspec.ModeSync, 40, filepath.Join(hc.shared, "data")))), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, errs, code := hc.gctl(t, 1, "job", "start", "-f", spec, "--detach"); code != 0 {
		t.Fatalf("job start: exit %d: %s", code, errs)
	}
	st := waitJob(t, hc.on(0), "tls", "the pservers serving", 60*time.Second, func(st api.JobStatus) bool {
		return st.Step > 0 && len(st.Pservers) == 2 && st.Pservers[0].Addr != "" && st.Pservers[1].Addr != ""
	})
	hc.assertPserverTLS(t, st.Pservers[0].Addr)
	hc.assertRefused(t)
	hc.assertRolesChecked(t, "tls")
	st = waitJob(t, hc.on(0), "tls", "the job to finish", 90*time.Second, succeeded)
	if countEvents(st, "job submitted by alice (operator)") != 1 {
		t.Errorf("no event records that alice (operator) submitted the job: %+v", st.Events)
	}
}

// assertRolesChecked: a viewer's certificate cannot stop the running job
// (exit 1, the role needed named); a client with the CA but neither a
// certificate nor a token is refused; the operator's bearer token from
// `gtraind cert issue` works in a context without certificates.
func (hc *hostCluster) assertRolesChecked(t *testing.T, job string) {
	t.Helper()
	certs := filepath.Join(hc.Dir, "pki")
	certCmd(t, "issue", "--dir", certs, "--client", "bob", "--role", "viewer")
	good := hc.GctlConfig
	defer func() { hc.GctlConfig = good }()
	hc.GctlConfig = gctlConfig(t, hc.Dir, "bob", certs, "bob")
	if _, errs, code := hc.gctl(t, 0, "job", "stop", job); code != 1 || !strings.Contains(errs, "bob (viewer) may not stop jobs: needs operator") {
		t.Errorf("a viewer stops the job: exit %d, %q; want exit 1 naming the operator role", code, errs)
	}
	if _, errs, code := hc.gctl(t, 0, "job", "status", job); code != 0 {
		t.Errorf("a viewer reads the job's status: exit %d: %s", code, errs)
	}
	for name, extra := range map[string]string{
		"no certificate, no token": "",
		"alice's token":            fmt.Sprintf("    token_file: %s\n", filepath.Join(certs, "alice.token")),
	} {
		hc.GctlConfig = filepath.Join(hc.Dir, "notcert.yaml")
		conf := fmt.Sprintf("current-context: c\ncontexts:\n  - name: c\n    endpoint: 127.0.0.1:1\n    tls: {ca: %s}\n%s",
			filepath.Join(certs, pki.CACertFile), extra)
		if err := os.WriteFile(hc.GctlConfig, []byte(conf), 0o600); err != nil {
			t.Fatal(err)
		}
		_, errs, code := hc.gctl(t, 0, "node", "list")
		switch {
		case extra == "" && (code != 1 || !strings.Contains(errs, "client certificate or a bearer token")):
			t.Errorf("gctl with %s: exit %d, %q; want exit 1 asking for a certificate or token", name, code, errs)
		case extra != "" && code != 0:
			t.Errorf("gctl with %s: exit %d: %s", name, code, errs)
		}
	}
}

// startTLSCluster makes the PKI with the gtraind binary and starts an agent
// per host with --tls-* and --gossip-key; gctl uses alice (operator).
func startTLSCluster(t *testing.T) *hostCluster {
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
	c, err := netcluster.New(netcluster.Options{Hosts: 2, Dir: dir, Bin: binDir, Etcd: netcluster.EtcdPlain})
	if err != nil {
		os.RemoveAll(dir)
		t.Fatal(err)
	}
	hc := &hostCluster{Cluster: c, shared: filepath.Join(dir, "shared")}
	t.Cleanup(func() { hc.close(t) })
	certs := filepath.Join(dir, "pki")
	certCmd(t, "init", "--dir", certs)
	certCmd(t, "issue", "--dir", certs, "--client", "alice", "--role", "operator")
	c.GctlConfig = gctlConfig(t, dir, "tls", certs, "alice")
	for _, h := range c.Hosts {
		certCmd(t, "issue", "--dir", certs, "--node", h.Name, "--addr", h.IP)
		if _, err := c.StartAgent(h, "--api-addr", h.IP+":"+netcluster.APIPort, "--gossip-addr", h.IP+":7946",
			"--tls-ca", filepath.Join(certs, pki.CACertFile), "--tls-cert", pki.CertPath(certs, h.Name),
			"--tls-key", pki.KeyPath(certs, h.Name), "--gossip-key", "@"+filepath.Join(certs, pki.GossipKeyFile)); err != nil {
			t.Fatal(err)
		}
	}
	housing(t, filepath.Join(hc.shared, "data"))
	return hc
}

// certCmd runs `gtraind cert ARGS`.
func certCmd(t *testing.T, args ...string) {
	t.Helper()
	out, err := exec.Command(filepath.Join(binDir, "gtraind"), append([]string{"cert"}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("gtraind cert %v: %v\n%s", args, err, out)
	}
}

// gctlConfig writes a gctl config whose context uses the client
// certificate name of the CA in certs; it returns its path.
func gctlConfig(t *testing.T, dir, file, certs, name string) string {
	t.Helper()
	path := filepath.Join(dir, file+".yaml")
	conf := fmt.Sprintf("current-context: c\ncontexts:\n  - name: c\n    endpoint: 127.0.0.1:1\n    tls: {ca: %s, cert: %s, key: %s}\n",
		filepath.Join(certs, pki.CACertFile), pki.CertPath(certs, name), pki.KeyPath(certs, name))
	if err := os.WriteFile(path, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// assertPserverTLS: a pserver of the job refuses a plaintext client and
// answers one with a certificate of the cluster, verified by its address.
func (hc *hostCluster) assertPserverTLS(t *testing.T, addr string) {
	t.Helper()
	certs := filepath.Join(hc.Dir, "pki")
	f := pki.Files{CA: filepath.Join(certs, pki.CACertFile), Cert: pki.CertPath(certs, "alice"), Key: pki.KeyPath(certs, "alice")}
	tlsCreds, err := f.ClientCreds()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		creds credentials.TransportCredentials
		want  codes.Code
	}{
		{"plaintext", insecure.NewCredentials(), codes.Unavailable},
		{"mutual TLS", tlsCreds, codes.OK},
	} {
		conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(tc.creds), hc.GRPCDialer())
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		_, err = api.NewPServerClient(conn).Info(ctx, &api.InfoRequest{})
		cancel()
		conn.Close()
		if status.Code(err) != tc.want {
			t.Errorf("pserver at %s, %s client: %v, want %s", addr, tc.name, err, tc.want)
		}
	}
}

// assertRefused: gctl without TLS, and gctl trusting another CA, cannot
// reach the agents.
func (hc *hostCluster) assertRefused(t *testing.T) {
	t.Helper()
	other := filepath.Join(hc.Dir, "other-pki")
	certCmd(t, "init", "--dir", other)
	certCmd(t, "issue", "--dir", other, "--client", "mallory", "--role", "admin")
	good := hc.GctlConfig
	defer func() { hc.GctlConfig = good }()
	for name, conf := range map[string]string{"plaintext": "", "another CA": gctlConfig(t, hc.Dir, "other", other, "mallory")} {
		hc.GctlConfig = conf
		_, errs, code := hc.gctl(t, 0, "node", "list")
		if code == 0 {
			t.Errorf("gctl %s: node list succeeded against a TLS agent", name)
		}
		if name == "another CA" && !strings.Contains(errs, "certificate") {
			t.Errorf("gctl %s: %q does not say the certificate is the problem", name, errs)
		}
	}
}

// An agent whose API is off loopback without TLS refuses to start (exit 2)
// and says how to fix it.
func TestPlainAgentOffLoopbackRefuses(t *testing.T) {
	cmd := exec.Command(filepath.Join(binDir, "gtraind"), "agent", "--dev", "--data-dir", t.TempDir(),
		"--api-addr", "0.0.0.0:0", "--etcd-client-addr", "127.0.0.1:0", "--etcd-peer-addr", "127.0.0.1:0")
	out, err := cmd.CombinedOutput()
	if cmd.ProcessState == nil || cmd.ProcessState.ExitCode() != 2 || !strings.Contains(string(out), "--insecure") ||
		!strings.Contains(string(out), "--tls-ca") {
		t.Errorf("plain agent on 0.0.0.0: %v\n%s\nwant exit 2 naming --tls-ca and --insecure", err, out)
	}
}
