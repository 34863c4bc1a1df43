package pki

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"fmt"
	"net"
	"slices"
	"strings"
	"time"
)

// Roles a certificate's OrganizationalUnit carries (viewer < operator <
// admin; a node acts as admin).
const (
	RoleNode     = "node"
	RoleAdmin    = "admin"
	RoleOperator = "operator"
	RoleViewer   = "viewer"
)

// ClientRoles are the roles a client certificate may carry, weakest first.
var ClientRoles = []string{RoleViewer, RoleOperator, RoleAdmin}

// Errors of Issue.
var (
	ErrBadRole = errors.New("unknown role")
	ErrBadName = errors.New("bad certificate name")
)

// Request says what to certify. Zero NotBefore/NotAfter mean now (minus a
// few minutes of clock skew) and LeafValidity from now.
type Request struct {
	Name string // CommonName: the node or client name
	Role string // RoleNode or one of ClientRoles
	// SANs of a node certificate, besides 127.0.0.1 and localhost.
	IPs []net.IP
	DNS []string

	NotBefore, NotAfter time.Time
}

// Issued is a certificate and its key, parsed and as PEM.
type Issued struct {
	Cert    *x509.Certificate
	Key     *ecdsa.PrivateKey
	CertPEM []byte
	KeyPEM  []byte
}

// IssueNode certifies node name for the addresses and names it is reached
// at (see the package doc).
func (ca *CA) IssueNode(name string, ips []net.IP, dns []string) (*Issued, error) {
	return ca.Issue(Request{Name: name, Role: RoleNode, IPs: ips, DNS: dns})
}

// IssueClient certifies a client name with role (admin, operator, viewer).
func (ca *CA) IssueClient(name, role string) (*Issued, error) {
	return ca.Issue(Request{Name: name, Role: role})
}

// Issue signs a new key pair for r.
func (ca *CA) Issue(r Request) (*Issued, error) {
	tmpl, err := leafTemplate(r)
	if err != nil {
		return nil, err
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("pki: key of %s: %w", r.Name, err)
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.Cert, &key.PublicKey, ca.Key)
	if err != nil {
		return nil, fmt.Errorf("pki: sign %s: %w", r.Name, err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, fmt.Errorf("pki: parse %s: %w", r.Name, err)
	}
	certPEM, keyPEM, err := encodePair(der, key)
	if err != nil {
		return nil, err
	}
	return &Issued{Cert: cert, Key: key, CertPEM: certPEM, KeyPEM: keyPEM}, nil
}

// leafTemplate is the certificate of r before signing: the usages and SANs
// of its kind (node or client).
func leafTemplate(r Request) (*x509.Certificate, error) {
	if err := ValidateName(r.Name); err != nil {
		return nil, err
	}
	serial, err := newSerial()
	if err != nil {
		return nil, err
	}
	now := time.Now()
	if r.NotBefore.IsZero() {
		r.NotBefore = now.Add(-backdate)
	}
	if r.NotAfter.IsZero() {
		r.NotAfter = now.Add(LeafValidity)
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: r.Name, OrganizationalUnit: []string{r.Role}, Organization: []string{"gtrain"}},
		NotBefore:    r.NotBefore,
		NotAfter:     r.NotAfter,
		KeyUsage:     x509.KeyUsageDigitalSignature,
	}
	switch {
	case r.Role == RoleNode:
		tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}
		tmpl.IPAddresses = appendIP(slices.Clone(r.IPs), net.IPv4(127, 0, 0, 1))
		tmpl.DNSNames = appendName(slices.Clone(r.DNS), "localhost")
	case slices.Contains(ClientRoles, r.Role):
		if len(r.IPs) > 0 || len(r.DNS) > 0 {
			return nil, fmt.Errorf("%w: client %s: addresses and DNS names are for node certificates", ErrBadName, r.Name)
		}
		tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}
	default:
		return nil, fmt.Errorf("%w %q for %s: want one of %s (or %s for a node)", ErrBadRole, r.Role, r.Name,
			strings.Join(ClientRoles, ", "), RoleNode)
	}
	return tmpl, nil
}

// ValidateName accepts names usable as a file name and a CommonName: the
// node names of the agent (host names) and client names.
func ValidateName(name string) error {
	if name == "" || len(name) > 64 {
		return fmt.Errorf("%w %q: want 1 to 64 characters", ErrBadName, name)
	}
	if name == "ca" || name[0] == '.' || name[0] == '-' {
		return fmt.Errorf("%w %q: reserved, or starts with '.' or '-'", ErrBadName, name)
	}
	for i, r := range name {
		ok := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-._", r)
		if !ok {
			return fmt.Errorf("%w %q: character %q at byte %d (use letters, digits, '-', '.', '_')", ErrBadName, name, r, i)
		}
	}
	return nil
}

func appendIP(ips []net.IP, ip net.IP) []net.IP {
	for _, x := range ips {
		if x.Equal(ip) {
			return ips
		}
	}
	return append(ips, ip)
}

func appendName(names []string, name string) []string {
	if slices.Contains(names, name) {
		return names
	}
	return append(names, name)
}
