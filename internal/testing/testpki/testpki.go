// Package testpki is a throwaway cluster CA for tests, laid out as
// `gtraind cert` lays it out (ECDSA P-256; a node certificate has OU
// "node" and serves and calls, a client certificate has OU = its role).
// It is test plumbing: the real certificates come from package pki.
package testpki

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// CA is a throwaway cluster CA.
type CA struct {
	Cert   *x509.Certificate
	Key    *ecdsa.PrivateKey
	File   string // the certificate as PEM (for --tls-ca)
	Pool   *x509.CertPool
	serial int64
}

// New makes a CA that lives as long as the test.
func New(t testing.TB) *CA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "gtrain test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	p := &CA{Cert: cert, Key: key, File: filepath.Join(t.TempDir(), "ca.crt"), Pool: x509.NewCertPool(), serial: 1}
	p.Pool.AddCert(cert)
	if err := os.WriteFile(p.File, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// Issue is a certificate for name with OU ou: a node certificate (server and
// client, SAN 127.0.0.1) when ou is "node", else a client certificate.
func (p *CA) Issue(t testing.TB, name, ou string) tls.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	p.serial++
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(p.serial), Subject: pkix.Name{CommonName: name, OrganizationalUnit: []string{ou}},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	if ou == "node" {
		tmpl.ExtKeyUsage = append(tmpl.ExtKeyUsage, x509.ExtKeyUsageServerAuth)
		tmpl.IPAddresses = []net.IP{net.IPv4(127, 0, 0, 1)}
		tmpl.DNSNames = []string{"localhost"}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, p.Cert, key.Public(), p.Key)
	if err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

// ServerTLS is the agent side of mutual TLS: a node certificate, client
// certificates verified against the CA when given (a token may stand in).
func (p *CA) ServerTLS(t testing.TB, node string) *tls.Config {
	return &tls.Config{
		MinVersion: tls.VersionTLS12, Certificates: []tls.Certificate{p.Issue(t, node, "node")},
		ClientCAs: p.Pool, ClientAuth: tls.VerifyClientCertIfGiven,
	}
}

// ClientTLS trusts the CA and presents certs (none for a token-only client).
func (p *CA) ClientTLS(certs ...tls.Certificate) *tls.Config {
	return &tls.Config{MinVersion: tls.VersionTLS12, RootCAs: p.Pool, Certificates: certs}
}

// WriteKey writes the CA's key (PKCS#8 PEM, mode 0600) next to its
// certificate and returns its path.
func (p *CA) WriteKey(t testing.TB) string {
	t.Helper()
	der, err := x509.MarshalPKCS8PrivateKey(p.Key)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(filepath.Dir(p.File), "ca.key")
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// WriteNode writes a node certificate for node (SAN 127.0.0.1) and its key
// next to the CA's certificate, for an agent's --tls-cert/--tls-key.
func (p *CA) WriteNode(t testing.TB, node string) (certFile, keyFile string) {
	t.Helper()
	c := p.Issue(t, node, "node")
	der, err := x509.MarshalPKCS8PrivateKey(c.PrivateKey)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Dir(p.File)
	certFile, keyFile = filepath.Join(dir, node+".crt"), filepath.Join(dir, node+".key")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: c.Certificate[0]}), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	return certFile, keyFile
}
