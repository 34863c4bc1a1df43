package pki

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// certDir is a directory with a CA, node n1 (10.1.2.3) and client alice (operator).
func certDir(t *testing.T) (string, *CA) {
	t.Helper()
	dir := t.TempDir()
	ca, err := NewCA("", 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := WriteCA(dir, ca, false); err != nil {
		t.Fatal(err)
	}
	node, err := ca.IssueNode("n1", []net.IP{net.ParseIP("10.1.2.3")}, []string{"n1.example"})
	if err != nil {
		t.Fatal(err)
	}
	client, err := ca.IssueClient("alice", RoleOperator)
	if err != nil {
		t.Fatal(err)
	}
	for name, is := range map[string]*Issued{"n1": node, "alice": client} {
		if err := WriteIssued(dir, name, is, false); err != nil {
			t.Fatal(err)
		}
	}
	return dir, ca
}

func files(dir, name string) Files {
	return Files{CA: filepath.Join(dir, CACertFile), Cert: CertPath(dir, name), Key: KeyPath(dir, name)}
}

// handshake runs a TLS handshake between the two configs over a pipe; the
// client verifies serverName. It returns the server's and client's errors.
func handshake(t *testing.T, server, client *tls.Config, serverName string) (serverErr, clientErr error) {
	t.Helper()
	a, b := tcpPair(t)
	defer a.Close()
	defer b.Close()
	_ = a.SetDeadline(time.Now().Add(10 * time.Second))
	_ = b.SetDeadline(time.Now().Add(10 * time.Second))
	client = client.Clone()
	client.ServerName = serverName
	done := make(chan error, 1)
	go func() {
		s := tls.Server(a, server)
		err := s.Handshake()
		if err == nil { // TLS 1.3: the client certificate is checked after the client's Finished
			_, err = s.Read(make([]byte, 1))
		}
		done <- err
		a.Close()
	}()
	c := tls.Client(b, client)
	clientErr = c.Handshake()
	if clientErr == nil {
		_, _ = c.Write([]byte{1})
	}
	b.Close()
	return <-done, clientErr
}

// tcpPair is both ends of a loopback TCP connection (buffered, unlike
// net.Pipe, so that an alert and a write may cross).
func tcpPair(t *testing.T) (server, client net.Conn) {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer lis.Close()
	client, err = net.Dial("tcp", lis.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	if server, err = lis.Accept(); err != nil {
		t.Fatal(err)
	}
	return server, client
}

func serverConf(t *testing.T, f Files) *tls.Config {
	t.Helper()
	c, err := f.ServerConfig()
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func clientConf(t *testing.T, f Files) *tls.Config {
	t.Helper()
	c, err := f.ClientConfig()
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestIssuedCertificatesVerifyAndCarryTheirIdentity(t *testing.T) {
	dir, ca := certDir(t)
	for _, tc := range []struct {
		name, role string
		usage      x509.ExtKeyUsage
		host       string
	}{
		{"n1", RoleNode, x509.ExtKeyUsageServerAuth, "10.1.2.3"},
		{"n1", RoleNode, x509.ExtKeyUsageServerAuth, "127.0.0.1"},
		{"n1", RoleNode, x509.ExtKeyUsageServerAuth, "n1.example"},
		{"n1", RoleNode, x509.ExtKeyUsageClientAuth, ""},
		{"alice", RoleOperator, x509.ExtKeyUsageClientAuth, ""},
	} {
		cert, err := readCert(CertPath(dir, tc.name))
		if err != nil {
			t.Fatal(err)
		}
		opts := x509.VerifyOptions{Roots: ca.Pool(), KeyUsages: []x509.ExtKeyUsage{tc.usage}, DNSName: tc.host}
		if _, err := cert.Verify(opts); err != nil {
			t.Errorf("%s as %v for %q: %v", tc.name, tc.usage, tc.host, err)
		}
		if name, role := Identity(cert); name != tc.name || role != tc.role {
			t.Errorf("Identity = %q, %q; want %q, %q", name, role, tc.name, tc.role)
		}
	}
	alice, _ := readCert(CertPath(dir, "alice"))
	if _, err := alice.Verify(x509.VerifyOptions{Roots: ca.Pool(), KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}); err == nil {
		t.Error("a client certificate verifies for server use")
	}
	node, _ := readCert(CertPath(dir, "n1"))
	if err := node.VerifyHostname("10.9.9.9"); err == nil {
		t.Error("the node certificate verifies for an address it was not issued for")
	}
}

func TestMutualTLSHandshakes(t *testing.T) {
	dir, ca := certDir(t)
	srv := serverConf(t, files(dir, "n1"))
	if s, c := handshake(t, srv, clientConf(t, files(dir, "alice")), "10.1.2.3"); s != nil || c != nil {
		t.Fatalf("client cert against node: server %v, client %v", s, c)
	}
	if s, c := handshake(t, srv, clientConf(t, files(dir, "n1")), "127.0.0.1"); s != nil || c != nil {
		t.Fatalf("node to node: server %v, client %v", s, c)
	}
	// No client certificate: the handshake passes (the authz layer decides).
	if s, c := handshake(t, srv, &tls.Config{RootCAs: ca.Pool()}, "127.0.0.1"); s != nil || c != nil {
		t.Fatalf("no client certificate: server %v, client %v", s, c)
	}
	// A server name not among the SANs fails.
	if _, c := handshake(t, srv, clientConf(t, files(dir, "alice")), "10.9.9.9"); c == nil {
		t.Error("the client accepted a server certificate for another address")
	}
	// A client certificate cannot serve.
	if _, c := handshake(t, serverConf(t, files(dir, "alice")), clientConf(t, files(dir, "n1")), "127.0.0.1"); c == nil {
		t.Error("a client certificate served")
	}
}

func TestServerRefusesExpiredAndForeignCertificates(t *testing.T) {
	dir, ca := certDir(t)
	expired, err := ca.Issue(Request{Name: "old", Role: RoleAdmin,
		NotBefore: time.Now().Add(-48 * time.Hour), NotAfter: time.Now().Add(-24 * time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	if err := WriteIssued(dir, "old", expired, false); err != nil {
		t.Fatal(err)
	}
	other := t.TempDir()
	ca2, _ := NewCA("other", 0)
	mallory, _ := ca2.IssueClient("mallory", RoleAdmin)
	_ = WriteCA(other, ca2, false)
	_ = WriteIssued(other, "mallory", mallory, false)

	srv := serverConf(t, files(dir, "n1"))
	foreign := clientConf(t, files(other, "mallory"))
	foreign.RootCAs = ca.Pool() // it trusts our server; the server must not trust it
	// The client presents its certificate whatever CAs the server names
	// (ClientConfig's GetClientCertificate).
	for name, conf := range map[string]*tls.Config{"expired": clientConf(t, files(dir, "old")), "other CA": foreign} {
		s, c := handshake(t, srv, conf, "127.0.0.1")
		if s == nil && c == nil {
			t.Errorf("%s client certificate accepted", name)
		}
	}
	// A client that trusts another CA refuses our server.
	if _, c := handshake(t, srv, clientConf(t, files(other, "mallory")), "127.0.0.1"); c == nil {
		t.Error("a client trusting another CA accepted the server")
	}
}

func TestFilesAreWrittenPrivateAndNotOverwritten(t *testing.T) {
	dir, ca := certDir(t)
	for name, want := range map[string]os.FileMode{CAKeyFile: 0o600, CACertFile: 0o644, "n1.key": 0o600, "n1.crt": 0o644} {
		st, err := os.Stat(filepath.Join(dir, name))
		if err != nil || st.Mode().Perm() != want {
			t.Errorf("%s: %v, %v; want mode %v", name, st.Mode(), err, want)
		}
	}
	ca2, _ := NewCA("", 0)
	if err := WriteCA(dir, ca2, false); !errors.Is(err, ErrExists) {
		t.Errorf("second WriteCA = %v, want ErrExists", err)
	}
	loaded, err := LoadCA(dir)
	if err != nil || !loaded.Cert.Equal(ca.Cert) {
		t.Fatalf("LoadCA after a refused overwrite: %v (same CA: %v)", err, err == nil && loaded.Cert.Equal(ca.Cert))
	}
	if err := WriteCA(dir, ca2, true); err != nil {
		t.Fatal(err)
	}
	if loaded, err = LoadCA(dir); err != nil || !loaded.Cert.Equal(ca2.Cert) {
		t.Errorf("forced WriteCA did not replace the CA: %v", err)
	}
	if _, err := LoadCA(t.TempDir()); !errors.Is(err, ErrNoCA) {
		t.Errorf("LoadCA of an empty dir = %v, want ErrNoCA", err)
	}
}

func TestBadRequests(t *testing.T) {
	ca, _ := NewCA("", 0)
	for _, r := range []Request{
		{Name: "bob", Role: "root"},
		{Name: "bob", Role: ""},
		{Name: "../x", Role: RoleAdmin},
		{Name: "ca", Role: RoleAdmin},
		{Name: "bob", Role: RoleViewer, IPs: []net.IP{net.IPv4(1, 2, 3, 4)}},
	} {
		if _, err := ca.Issue(r); !errors.Is(err, ErrBadRole) && !errors.Is(err, ErrBadName) {
			t.Errorf("Issue(%+v) = %v, want ErrBadRole or ErrBadName", r, err)
		}
	}
	if err := (Files{CA: "ca.crt"}).Validate(); !errors.Is(err, ErrIncomplete) || !strings.Contains(err.Error(), "--tls-key") {
		t.Errorf("Validate of a CA alone = %v", err)
	}
}

func TestParseGossipKey(t *testing.T) {
	key, err := NewGossipKey()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), GossipKeyFile)
	if err := os.WriteFile(path, []byte(key+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{key, "@" + path, "AAAAAAAAAAAAAAAAAAAAAA=="} {
		if b, err := ParseGossipKey(s); err != nil || (len(b) != 32 && len(b) != 16) {
			t.Errorf("ParseGossipKey(%q) = %d bytes, %v", s, len(b), err)
		}
	}
	for _, s := range []string{"", "not base64!", "AAAA", "@/nonexistent/key"} {
		if _, err := ParseGossipKey(s); !errors.Is(err, ErrGossipKey) {
			t.Errorf("ParseGossipKey(%q) = %v, want ErrGossipKey", s, err)
		}
	}
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ParseGossipKey("@" + path); !errors.Is(err, ErrGossipKey) || !strings.Contains(err.Error(), "chmod 600 "+path) {
		t.Errorf("a gossip key file readable by all: %v, want ErrGossipKey naming chmod 600", err)
	}
}
