package pki

import (
	"context"
	"crypto/x509"

	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/peer"
)

// Identity is the name and role a certificate issued by Issue carries: its
// CommonName and its first OrganizationalUnit (RoleNode for a node, else a
// client role). Only call it on a certificate the CA verified.
func Identity(cert *x509.Certificate) (name, role string) {
	if cert == nil {
		return "", ""
	}
	if len(cert.Subject.OrganizationalUnit) > 0 {
		role = cert.Subject.OrganizationalUnit[0]
	}
	return cert.Subject.CommonName, role
}

// PeerCert is the verified client certificate of a gRPC call, nil when the
// caller gave none (or the connection is plaintext).
func PeerCert(ctx context.Context) *x509.Certificate {
	p, ok := peer.FromContext(ctx)
	if !ok {
		return nil
	}
	info, ok := p.AuthInfo.(credentials.TLSInfo)
	if !ok || len(info.State.VerifiedChains) == 0 || len(info.State.VerifiedChains[0]) == 0 {
		return nil
	}
	return info.State.VerifiedChains[0][0]
}
