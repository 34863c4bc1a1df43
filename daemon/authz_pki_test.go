package daemon

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

// testPKI is a throwaway cluster CA, laid out as `gtraind cert` lays it
// out (ECDSA P-256; OU = role, "node" for agents).
type testPKI struct {
	cert   *x509.Certificate
	key    *ecdsa.PrivateKey
	caFile string // PEM, for Config.TLSCA
	pool   *x509.CertPool
	serial int64
}

func newTestPKI(t *testing.T) *testPKI {
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
	p := &testPKI{cert: cert, key: key, caFile: filepath.Join(t.TempDir(), "ca.crt"), pool: x509.NewCertPool(), serial: 1}
	p.pool.AddCert(cert)
	if err := os.WriteFile(p.caFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// issue is a certificate for name with OU ou: a node certificate (server and
// client, SAN 127.0.0.1) when ou is "node", else a client certificate.
func (p *testPKI) issue(t *testing.T, name, ou string) tls.Certificate {
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
	der, err := x509.CreateCertificate(rand.Reader, tmpl, p.cert, key.Public(), p.key)
	if err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

// serverTLS is the agent side of mutual TLS: a node certificate, client
// certificates verified against the CA when given (a token may stand in).
func (p *testPKI) serverTLS(t *testing.T, node string) *tls.Config {
	return &tls.Config{
		MinVersion: tls.VersionTLS12, Certificates: []tls.Certificate{p.issue(t, node, "node")},
		ClientCAs: p.pool, ClientAuth: tls.VerifyClientCertIfGiven,
	}
}

// clientTLS trusts the CA and presents certs (none for a token-only client).
func (p *testPKI) clientTLS(certs ...tls.Certificate) *tls.Config {
	return &tls.Config{MinVersion: tls.VersionTLS12, RootCAs: p.pool, Certificates: certs}
}
