package daemon

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"net"
	"os"
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
	"github.com/gtrain/gtrain/pki"
)

// testPKI writes a CA into a temp dir and issues what names asks for
// (name -> role); node certificates cover loopback only.
func testPKI(t *testing.T, names map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	ca, err := pki.NewCA("", 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := pki.WriteCA(dir, ca, false); err != nil {
		t.Fatal(err)
	}
	for name, role := range names {
		is, err := ca.Issue(pki.Request{Name: name, Role: role})
		if err != nil {
			t.Fatal(err)
		}
		if err := pki.WriteIssued(dir, name, is, false); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func filesOf(dir, name string) pki.Files {
	return pki.Files{CA: filepath.Join(dir, pki.CACertFile), Cert: pki.CertPath(dir, name), Key: pki.KeyPath(dir, name)}
}

// listNodes calls ListNodes on addr with creds.
func listNodesWith(t *testing.T, addr string, creds credentials.TransportCredentials) ([]api.NodeRow, error) {
	t.Helper()
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(creds))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	doc, err := api.NewControlClient(conn).ListNodes(ctx, &api.ListNodesRequest{})
	if err != nil {
		return nil, err
	}
	var rows []api.NodeRow
	if err := json.Unmarshal(doc.GetJson(), &rows); err != nil {
		t.Fatal(err)
	}
	return rows, nil
}

func clientCreds(t *testing.T, f pki.Files) credentials.TransportCredentials {
	t.Helper()
	c, err := f.ClientCreds()
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// Two agents with node certificates serve mutual TLS: a client with a
// certificate of the CA lists both nodes; a plaintext client and one that
// trusts another CA cannot; the log relay reaches the other agent with the
// node certificate, and would not without it.
func TestTLSAgents(t *testing.T) {
	dir := testPKI(t, map[string]string{"n1": pki.RoleNode, "n2": pki.RoleNode, "alice": pki.RoleAdmin})
	other := testPKI(t, map[string]string{"mallory": pki.RoleAdmin})
	ep := startEtcd(t)
	var agents []*testAgent
	for _, n := range []string{"n1", "n2"} {
		cfg := testConfig(t, n, ep)
		cfg.TLS = filesOf(dir, n)
		cfg.GossipKey = []byte("0123456789abcdef")
		agents = append(agents, startAgent(t, cfg))
	}
	rows, err := listNodesWith(t, agents[0].addr, clientCreds(t, filesOf(dir, "alice")))
	if err != nil || len(rows) != 2 {
		t.Fatalf("ListNodes with alice's certificate: %d nodes, %v; want both", len(rows), err)
	}
	if _, err := listNodesWith(t, agents[0].addr, insecure.NewCredentials()); status.Code(err) != codes.Unavailable {
		t.Errorf("a plaintext client: %v, want Unavailable (no TLS handshake)", err)
	}
	if _, err := listNodesWith(t, agents[0].addr, clientCreds(t, filesOf(other, "mallory"))); status.Code(err) != codes.Unavailable ||
		!strings.Contains(err.Error(), "certificate") {
		t.Errorf("a client trusting another CA: %v, want Unavailable naming the certificate", err)
	}
	relayTo(t, agents[0], agents[1])
}

// relayTo asks b for the logs of a job that does not exist, with the
// credentials a's log relay dials other agents with (peerCreds): the answer
// (NotFound) proves the TLS handshake passed; without them it does not.
func relayTo(t *testing.T, a, b *testAgent) {
	t.Helper()
	logs := func(creds credentials.TransportCredentials) error {
		conn, err := grpc.NewClient(b.addr, grpc.WithTransportCredentials(creds))
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		stream, err := api.NewControlClient(conn).Logs(ctx, &api.LogsRequest{Job: "nosuchjob"})
		if err == nil {
			_, err = stream.Recv()
		}
		return err
	}
	if err := logs(insecure.NewCredentials()); status.Code(err) != codes.Unavailable {
		t.Errorf("relay without the node certificate: %v, want Unavailable", err)
	}
	creds, err := peerCreds(a.cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := logs(creds); status.Code(err) != codes.NotFound {
		t.Errorf("relay with the node certificate: %v, want NotFound from the other agent", err)
	}
}

// An API off loopback needs TLS or Insecure; one on loopback TLS, Dev or
// Insecure (issue 19: no anonymous admin by default); TLS files go together.
func TestValidateTLS(t *testing.T) {
	dir := testPKI(t, map[string]string{"n1": pki.RoleNode})
	for _, tc := range []struct {
		name string
		edit func(*Config)
		want string // "" accepted
	}{
		{"loopback plaintext", func(c *Config) {}, "--dev"},
		{"loopback plaintext insecure", func(c *Config) { c.Insecure = true }, ""},
		{"loopback plaintext dev", func(c *Config) {
			c.Dev, c.EtcdEndpoints, c.EtcdClientAddr, c.EtcdPeerAddr = true, nil, "127.0.0.1:0", "127.0.0.1:0"
		}, ""},
		{"loopback TLS", func(c *Config) { c.TLS = filesOf(dir, "n1") }, ""},
		{"unix socket plaintext", func(c *Config) { c.APIAddr = "unix:///run/gtrain/api.sock" }, ""},
		{"relative unix socket", func(c *Config) { c.APIAddr = "unix://api.sock" }, "absolute path"},
		{"wildcard plaintext", func(c *Config) { c.APIAddr = "0.0.0.0:7164" }, "--insecure"},
		{"address plaintext", func(c *Config) { c.APIAddr = "10.1.1.1:7164" }, "--tls-ca"},
		{"wildcard insecure", func(c *Config) { c.APIAddr, c.Insecure = "0.0.0.0:7164", true }, ""},
		{"wildcard TLS", func(c *Config) { c.APIAddr, c.TLS = "0.0.0.0:7164", filesOf(dir, "n1") }, ""},
		{"half TLS", func(c *Config) { c.TLS = pki.Files{CA: "ca.crt"} }, "--tls-cert"},
		{"short gossip key", func(c *Config) { c.GossipKey = []byte("short") }, "--gossip-key"},
		{"console off loopback plaintext", func(c *Config) { c.UIAddr = "0.0.0.0:8164" }, "--ui-addr"},
		{"console off loopback TLS", func(c *Config) { c.UIAddr, c.TLS = "0.0.0.0:8164", filesOf(dir, "n1") }, ""},
		{"console not HOST:PORT", func(c *Config) { c.UIAddr = "8164" }, "--ui-addr"},
		{"console loopback plaintext over a unix API", func(c *Config) {
			c.APIAddr, c.UIAddr = "unix:///run/gtrain/api.sock", "127.0.0.1:8164"
		}, "--ui-addr"},
		{"console loopback plaintext dev", func(c *Config) {
			c.Dev, c.EtcdEndpoints, c.EtcdClientAddr, c.EtcdPeerAddr = true, nil, "127.0.0.1:0", "127.0.0.1:0"
			c.UIAddr = "127.0.0.1:8164"
		}, ""},
		{"console loopback plaintext insecure", func(c *Config) { c.UIAddr, c.Insecure = "127.0.0.1:8164", true }, ""},
		{"console loopback TLS", func(c *Config) { c.UIAddr, c.TLS = "127.0.0.1:8164", filesOf(dir, "n1") }, ""},
	} {
		cfg := testConfig(t, "n1", "127.0.0.1:2379")
		cfg.Insecure = false
		tc.edit(&cfg)
		err := cfg.Validate()
		if tc.want == "" && err != nil || tc.want != "" && (!errors.Is(err, ErrInvalidConfig) || !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%s: Validate = %v, want %q", tc.name, err, tc.want)
		}
	}
}

// A node certificate that does not cover the address dialled is refused:
// why `cert issue --node` needs --addr.
func TestTLSServerNameIsTheAddressDialled(t *testing.T) {
	dir := testPKI(t, map[string]string{"n1": pki.RoleNode, "alice": pki.RoleViewer})
	ep := startEtcd(t)
	cfg := testConfig(t, "n1", ep)
	cfg.TLS = filesOf(dir, "n1")
	a := startAgent(t, cfg)
	_, port, _ := net.SplitHostPort(a.addr)
	conf, err := filesOf(dir, "alice").ClientConfig()
	if err != nil {
		t.Fatal(err)
	}
	conf.ServerName = "10.9.9.9" // as if dialled at an address the certificate lacks
	_, err = listNodesWith(t, net.JoinHostPort("127.0.0.1", port), credentials.NewTLS(conf))
	if status.Code(err) != codes.Unavailable || !strings.Contains(err.Error(), "10.9.9.9") {
		t.Errorf("server name outside the SANs: %v, want Unavailable naming 10.9.9.9", err)
	}
	conf = conf.Clone()
	conf.ServerName = ""
	conf.MinVersion = tls.VersionTLS13
	if _, err := listNodesWith(t, net.JoinHostPort("localhost", port), credentials.NewTLS(conf)); err != nil {
		t.Errorf("dialled as localhost (a SAN): %v", err)
	}
}

// An agent refuses, at start, a certificate that is not a node
// certificate, or one that does not cover the address it advertises.
func TestAgentChecksItsCertificate(t *testing.T) {
	dir := testPKI(t, map[string]string{"n1": pki.RoleNode, "alice": pki.RoleAdmin})
	for _, tc := range []struct {
		cert, advertise, want string
	}{
		{"alice", "", "not a node certificate"},
		{"n1", "10.9.9.9", "--addr 10.9.9.9"},
	} {
		cfg := testConfig(t, "n1", "127.0.0.1:1")
		cfg.TLS, cfg.AdvertiseAddr = filesOf(dir, tc.cert), tc.advertise
		err := Run(t.Context(), cfg, func(string) { t.Errorf("%s: the agent started", tc.cert) })
		if !errors.Is(err, ErrInvalidConfig) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s advertising %q: %v, want ErrInvalidConfig naming %q", tc.cert, tc.advertise, err, tc.want)
		}
	}
}

// An agent refuses, before it starts, a TLS or etcd key file its group or
// others may read, naming the file and the chmod that fixes it; the 0600
// key gtraind cert wrote passes.
func TestAgentRefusesAnOpenKey(t *testing.T) {
	dir := testPKI(t, map[string]string{"n1": pki.RoleNode})
	cfg := testConfig(t, "n1", "127.0.0.1:1")
	cfg.TLS = filesOf(dir, "n1")
	if err := cfg.Validate(); err != nil {
		t.Fatalf("the key gtraind cert wrote: %v", err)
	}
	if err := os.Chmod(cfg.TLS.Key, 0o640); err != nil {
		t.Fatal(err)
	}
	err := cfg.Validate()
	if !errors.Is(err, ErrInvalidConfig) || !errors.Is(err, pki.ErrKeyMode) || !strings.Contains(err.Error(), "chmod 600 "+cfg.TLS.Key) {
		t.Errorf("a 0640 --tls-key: %v, want ErrInvalidConfig naming chmod 600 %s", err, cfg.TLS.Key)
	}
	cfg.TLS = pki.Files{}
	cfg.EtcdCACert, cfg.EtcdCert, cfg.EtcdKey = filepath.Join(dir, pki.CACertFile), pki.CertPath(dir, "n1"), pki.KeyPath(dir, "n1")
	if err := cfg.Validate(); !errors.Is(err, pki.ErrKeyMode) || !strings.Contains(err.Error(), "--etcd-key") {
		t.Errorf("a 0640 --etcd-key: %v, want it refused by name", err)
	}
}

// The roles get the agent's TLS files, absolute: they may run elsewhere
// (supervisor's role tests check the files reach the command line).
func TestRolesGetTheTLSFiles(t *testing.T) {
	cfg := testConfig(t, "n1", "127.0.0.1:1")
	cfg.TLS = pki.Files{CA: "pki/ca.crt", Cert: "pki/n1.crt", Key: "pki/n1.key"}
	cfg, err := cfg.withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	got := cfg.supervisorConfig([]string{"127.0.0.1:1"}).TLS
	for _, f := range []string{got.CA, got.Cert, got.Key} {
		if !filepath.IsAbs(f) || !strings.Contains(f, "pki/n1.") && !strings.HasSuffix(f, "pki/ca.crt") {
			t.Errorf("the roles get TLS files %+v, want absolute paths of pki/*", got)
		}
	}
}
