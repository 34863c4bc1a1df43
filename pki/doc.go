// Package pki owns gtrain's certificates and the TLS settings built from
// them (issue 10, mTLS).
//
// A cluster has one certificate authority (ca.crt, ca.key), written by
// `gtraind cert init`. `gtraind cert issue` signs with it:
//
//   - node certificates: CommonName = node name, OrganizationalUnit =
//     ["node"], usable as server and as client (agents, masters and
//     pservers serve with it and dial each other with it), SANs = the
//     node's addresses and names plus 127.0.0.1 and localhost. A peer
//     dialled by IP is verified against the IP SANs, so the address a node
//     advertises must be among them.
//   - client certificates: CommonName = client name, OrganizationalUnit =
//     [role] (admin, operator or viewer), client usage only: such a
//     certificate cannot serve.
//
// Keys are ECDSA P-256; everything is the standard library's crypto/x509.
// Files tells where a process finds its CA, certificate and key, and makes
// the gRPC transport credentials of the Control API's server (mutual TLS, a
// client certificate verified when given), of a role's server (a verified
// client certificate required) and of a client; its zero value means
// plaintext. Identity reads the name and role a verified peer certificate
// carries, for the authorization layer.
package pki
