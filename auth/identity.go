package auth

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
)

// ErrNoRole marks a client certificate whose subject names no role.
var ErrNoRole = errors.New("certificate names no role")

// How a caller was identified (Identity.Via).
const (
	ViaCertificate = "certificate"
	ViaToken       = "token"
	ViaNone        = "none"        // an agent without TLS: everyone is admin
	ViaUnixSocket  = "unix-socket" // the agent's own user, on its 0600 socket
)

// AnonymousName is the name of a caller of an agent without TLS.
const AnonymousName = "anonymous"

// Identity is a caller of the Control API.
type Identity struct {
	Name string
	Role Role
	Via  string // ViaCertificate, ViaToken or ViaNone
	// TokenID is the id (jti) of the bearer token it came from, for the
	// audit and `gctl token revoke`; "" otherwise.
	TokenID string
	// Node: a node certificate's (OU NodeRole), which may make only the
	// agent-to-agent calls.
	Node bool
}

// Anonymous is every caller of an agent without TLS (--dev, --insecure):
// admin, since nothing proves who it is.
func Anonymous() Identity { return Identity{Name: AnonymousName, Role: Admin, Via: ViaNone} }

// LocalName is the name of a caller on the agent's Unix socket.
const LocalName = "local"

// Local is a caller on the agent's Unix socket (--api-addr unix:///PATH,
// mode 0600): the agent's own user or root, who can read its keys; admin.
func Local() Identity { return Identity{Name: LocalName, Role: Admin, Via: ViaUnixSocket} }

// RoleName is the caller's role as the audit names it: NodeRole for a
// node's certificate, else its role.
func (id Identity) RoleName() string {
	if id.Node {
		return NodeRole
	}
	return id.Role.String()
}

// String is how events and messages name the caller: "alice (operator)",
// or "anonymous" on an agent without TLS.
func (id Identity) String() string {
	switch {
	case id.Via == ViaNone:
		return id.Name
	}
	return fmt.Sprintf("%s (%s)", id.Name, id.RoleName())
}

// FromCertificate is the identity a verified client or node certificate
// names: CommonName is the name, OrganizationalUnit[0] the role.
func FromCertificate(cert *x509.Certificate) (Identity, error) {
	name := cert.Subject.CommonName
	if name == "" {
		return Identity{}, fmt.Errorf("%w: the certificate has no CommonName", ErrNoRole)
	}
	if len(cert.Subject.OrganizationalUnit) == 0 {
		return Identity{}, fmt.Errorf("%w: certificate %q has no OrganizationalUnit; issue it with `gtraind cert issue --client NAME --role ROLE`", ErrNoRole, name)
	}
	role, err := CertRole(cert.Subject.OrganizationalUnit[0])
	if err != nil {
		return Identity{}, fmt.Errorf("certificate %q: %w", name, err)
	}
	return Identity{Name: name, Role: role, Via: ViaCertificate, Node: cert.Subject.OrganizationalUnit[0] == NodeRole}, nil
}

type identityKey struct{}

// NewContext carries id to the handlers of a request.
func NewContext(ctx context.Context, id Identity) context.Context {
	return context.WithValue(ctx, identityKey{}, id)
}

// FromContext is the identity NewContext put in ctx.
func FromContext(ctx context.Context) (Identity, bool) {
	id, ok := ctx.Value(identityKey{}).(Identity)
	return id, ok
}
