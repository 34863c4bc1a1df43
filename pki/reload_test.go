package pki

import (
	"net"
	"os"
	"testing"
)

// A replaced certificate and key are presented from the next handshake on,
// by servers and clients; a half-written replacement keeps the last good pair.
func TestKeyPairReloadsReplacedFiles(t *testing.T) {
	dir, ca := certDir(t)
	f := files(dir, "n1")
	srv, cli := serverConf(t, f), clientConf(t, f)
	serial := func() (string, string) {
		s, err := srv.GetCertificate(nil)
		if err != nil {
			t.Fatal(err)
		}
		c, err := cli.GetClientCertificate(nil)
		if err != nil {
			t.Fatal(err)
		}
		return s.Leaf.SerialNumber.String(), c.Leaf.SerialNumber.String()
	}
	oldS, oldC := serial()
	next, err := ca.IssueNode("n1", []net.IP{net.ParseIP("10.1.2.3")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := WriteIssued(dir, "n1", next, true); err != nil {
		t.Fatal(err)
	}
	want := next.Cert.SerialNumber.String()
	if s, c := serial(); s != want || c != want || s == oldS || c == oldC {
		t.Errorf("after the replacement: server %s, client %s; want %s", s, c, want)
	}
	if err := os.WriteFile(f.Cert, []byte("-----BEGIN CERT"), 0o600); err != nil {
		t.Fatal(err)
	}
	if s, c := serial(); s != want || c != want {
		t.Errorf("a half-written certificate replaced the good one: server %s, client %s; want %s", s, c, want)
	}
}
