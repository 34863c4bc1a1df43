package etcdproc

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"

	"go.etcd.io/etcd/client/pkg/v3/transport"
)

// PKI is a throw-away certificate authority with one server certificate
// (for every member) and one client certificate, as PEM files.
type PKI struct {
	CACert                string
	ServerCert, ServerKey string
	ClientCert, ClientKey string
	// JWTPub and JWTKey sign etcd's auth tokens: unlike its default
	// "simple" tokens, which live in one member's memory, a JWT stays valid
	// when the member that issued it dies.
	JWTPub, JWTKey string
}

// NewPKI writes a CA, a server certificate valid for hosts and a client
// certificate into dir.
func NewPKI(dir string, hosts ...string) (*PKI, error) {
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	ca := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "gtrain test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, ca, ca, &caKey.PublicKey, caKey)
	if err != nil {
		return nil, err
	}
	p := &PKI{CACert: filepath.Join(dir, "ca.pem")}
	if err := writePEM(p.CACert, "CERTIFICATE", caDER); err != nil {
		return nil, err
	}
	server := leaf(2, "etcd", x509.ExtKeyUsageServerAuth)
	for _, h := range hosts {
		if ip := net.ParseIP(h); ip != nil {
			server.IPAddresses = append(server.IPAddresses, ip)
		} else {
			server.DNSNames = append(server.DNSNames, h)
		}
	}
	if p.ServerCert, p.ServerKey, err = issue(dir, "server", server, ca, caKey); err != nil {
		return nil, err
	}
	client := leaf(3, "gtrain", x509.ExtKeyUsageClientAuth)
	if p.ClientCert, p.ClientKey, err = issue(dir, "client", client, ca, caKey); err != nil {
		return nil, err
	}
	if p.JWTPub, p.JWTKey, err = jwtKeys(dir); err != nil {
		return nil, err
	}
	return p, nil
}

// jwtKeys writes an ES256 key pair for etcd's --auth-token jwt.
func jwtKeys(dir string) (pub, key string, err error) {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return "", "", err
	}
	kDER, err := x509.MarshalECPrivateKey(k)
	if err != nil {
		return "", "", err
	}
	pubDER, err := x509.MarshalPKIXPublicKey(&k.PublicKey)
	if err != nil {
		return "", "", err
	}
	pub, key = filepath.Join(dir, "jwt.pub.pem"), filepath.Join(dir, "jwt.key.pem")
	if err := writePEM(pub, "PUBLIC KEY", pubDER); err != nil {
		return "", "", err
	}
	return pub, key, writePEM(key, "EC PRIVATE KEY", kDER)
}

func leaf(serial int64, name string, usage x509.ExtKeyUsage) *x509.Certificate {
	return &x509.Certificate{
		SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{usage},
	}
}

// issue signs tmpl with the CA and writes NAME.pem and NAME-key.pem.
func issue(dir, name string, tmpl, ca *x509.Certificate, caKey *ecdsa.PrivateKey) (cert, key string, err error) {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return "", "", err
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &k.PublicKey, caKey)
	if err != nil {
		return "", "", fmt.Errorf("certificate %s: %w", name, err)
	}
	kDER, err := x509.MarshalECPrivateKey(k)
	if err != nil {
		return "", "", err
	}
	cert, key = filepath.Join(dir, name+".pem"), filepath.Join(dir, name+"-key.pem")
	if err := writePEM(cert, "CERTIFICATE", der); err != nil {
		return "", "", err
	}
	return cert, key, writePEM(key, "EC PRIVATE KEY", kDER)
}

func writePEM(path, kind string, der []byte) error {
	b := pem.EncodeToMemory(&pem.Block{Type: kind, Bytes: der})
	if err := os.WriteFile(path, b, 0o600); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// ClientTLS is the client side of the PKI, as the etcd client wants it.
func (p *PKI) ClientTLS() (*tls.Config, error) {
	return transport.TLSInfo{TrustedCAFile: p.CACert, CertFile: p.ClientCert, KeyFile: p.ClientKey}.ClientConfig()
}
