package main

import (
	"bytes"
	"context"
	"crypto/x509"
	"encoding/pem"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gtrain/gtrain/auth"
	"github.com/gtrain/gtrain/pki"
)

// gtraind runs the command line in-process and returns its output and
// exit code.
func gtraind(t *testing.T, args ...string) (string, int) {
	t.Helper()
	root := newRoot()
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&out)
	root.SetArgs(args)
	err := root.ExecuteContext(context.Background())
	if err != nil {
		out.WriteString(err.Error())
	}
	return out.String(), exitCode(err)
}

func TestCertInitAndIssue(t *testing.T) {
	dir := t.TempDir()
	if out, code := gtraind(t, "cert", "init", "--dir", dir); code != 0 {
		t.Fatalf("cert init: exit %d: %s", code, out)
	}
	if _, err := pki.ParseGossipKey("@" + filepath.Join(dir, pki.GossipKeyFile)); err != nil {
		t.Errorf("gossip.key: %v", err)
	}
	if out, code := gtraind(t, "cert", "issue", "--dir", dir, "--node", "n1", "--addr", "10.0.0.11,10.0.0.12", "--dns", "n1.lan"); code != 0 {
		t.Fatalf("cert issue --node: exit %d: %s", code, out)
	}
	out, code := gtraind(t, "cert", "issue", "--dir", dir, "--client", "alice", "--role", "viewer")
	if code != 0 {
		t.Fatalf("cert issue --client: exit %d: %s", code, out)
	}
	n1 := parseCert(t, pki.CertPath(dir, "n1"))
	if err := n1.VerifyHostname("10.0.0.12"); err != nil || n1.VerifyHostname("n1.lan") != nil {
		t.Errorf("n1's SANs %v %v: %v", n1.IPAddresses, n1.DNSNames, err)
	}
	if name, role := pki.Identity(parseCert(t, pki.CertPath(dir, "alice"))); name != "alice" || role != "viewer" {
		t.Errorf("alice's certificate is %s/%s", name, role)
	}
	if st, err := os.Stat(pki.KeyPath(dir, "alice")); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("alice.key: %v %v, want mode 0600", st.Mode(), err)
	}
	// The client also gets a bearer token with the same identity.
	tok, err := os.ReadFile(filepath.Join(dir, "alice.token"))
	if err != nil {
		t.Fatal(err)
	}
	ca := parseCert(t, filepath.Join(dir, pki.CACertFile))
	id, err := auth.VerifyToken(ca, strings.TrimSpace(string(tok)))
	if err != nil || id.Name != "alice" || id.Role != auth.Viewer {
		t.Errorf("alice.token: %+v, %v; want alice as viewer", id, err)
	}
	// The admin is shown the token's id, to revoke it.
	if id.TokenID == "" || !strings.Contains(out, "gctl token revoke "+id.TokenID) {
		t.Errorf("cert issue --client does not show the token id %q:\n%s", id.TokenID, out)
	}
	if _, err := os.Stat(filepath.Join(dir, "n1.token")); err == nil {
		t.Errorf("a node certificate got a token")
	}
}

func parseCert(t *testing.T, path string) *x509.Certificate {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	block, _ := pem.Decode(b)
	c, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// Bad input to gtraind cert exits 2 with a message naming the problem.
func TestCertBadInput(t *testing.T) {
	dir := t.TempDir()
	if _, code := gtraind(t, "cert", "issue", "--dir", dir, "--client", "a", "--role", "admin"); code != 2 {
		t.Errorf("issue without a CA: exit %d, want 2", code)
	}
	if out, code := gtraind(t, "cert", "init", "--dir", dir); code != 0 {
		t.Fatal(out)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"init"}, "already exists"},
		{[]string{"issue", "--client", "a", "--role", "root"}, "unknown role"},
		{[]string{"issue", "--client", "a"}, "--role"},
		{[]string{"issue", "--client", "a", "--node", "b"}, "both"},
		{[]string{"issue", "--node", "b", "--addr", "host.lan"}, "--dns"},
		{[]string{"issue", "--node", "../b"}, "bad certificate name"},
		{[]string{"issue"}, "--node NAME or --client"},
	} {
		out, code := gtraind(t, append(append([]string{"cert"}, tc.args...), "--dir", dir)...)
		if code != 2 || !strings.Contains(out, tc.want) {
			t.Errorf("gtraind cert %v: exit %d, %q; want exit 2 naming %q", tc.args, code, out, tc.want)
		}
	}
}

// An agent whose API is off loopback without TLS refuses to start (exit 2)
// unless --insecure; the TLS flags go together; a bad gossip key is refused.
func TestAgentRefusesAnInsecureAPI(t *testing.T) {
	data := t.TempDir()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--api-addr", "0.0.0.0:0"}, "--insecure"},
		{[]string{"--api-addr", "0.0.0.0:0", "--tls-ca", "ca.crt"}, "--tls-key"},
		{[]string{"--gossip-key", "c2hvcnQ="}, "--gossip-key"},
		{[]string{"--gossip-key", "MDEyMzQ1Njc4OWFiY2RlZg=="}, "--gossip-key @FILE"}, // a good key, but on the command line
	} {
		args := append([]string{"agent", "--dev", "--data-dir", data, "--etcd-client-addr", "127.0.0.1:0", "--etcd-peer-addr", "127.0.0.1:0"}, tc.args...)
		out, code := gtraind(t, args...)
		if code != 2 || !strings.Contains(out, tc.want) {
			t.Errorf("gtraind %v: exit %d, %q; want exit 2 naming %s", tc.args, code, out, tc.want)
		}
	}
	if entries, _ := os.ReadDir(data); len(entries) != 0 {
		t.Errorf("a refused agent created %d entries in its data dir", len(entries))
	}
	cfg, err := agentSettings(t, "--dev", "--api-addr", "0.0.0.0:7164", "--insecure")
	if err != nil || !cfg.Insecure {
		t.Errorf("--insecure: %v, insecure=%v", err, cfg.Insecure)
	}
}

// A role's TLS flags go together, too.
func TestRoleTLSFlagsGoTogether(t *testing.T) {
	out, code := gtraind(t, "pserver", "--job", "j", "--etcd-endpoints", "127.0.0.1:1", "--listen", "127.0.0.1:0", "--tls-ca", "ca.crt")
	if code != 2 || !strings.Contains(out, "--tls-cert") {
		t.Errorf("pserver --tls-ca alone: exit %d, %q; want exit 2 naming --tls-cert", code, out)
	}
}
