package auth

import (
	"errors"
	"fmt"
)

// ErrUnknownRole marks a role name that is none of viewer, operator, admin
// (or node, in a certificate).
var ErrUnknownRole = errors.New("unknown role")

// Role is what a caller may do; a higher role may do everything a lower one
// may.
type Role int

// The roles, lowest first. The zero Role is no role: it allows nothing.
const (
	Viewer Role = iota + 1
	Operator
	Admin
)

// NodeRole is the OrganizationalUnit of a node certificate. It is no role
// of the Control API's: a node's identity (Identity.Node) may make only the
// calls agents make of each other (relayed logs and models), as a viewer,
// so that a node's key does not give the cluster away.
const NodeRole = "node"

// String is the role's name as certificates and tokens spell it.
func (r Role) String() string {
	switch r {
	case Viewer:
		return "viewer"
	case Operator:
		return "operator"
	case Admin:
		return "admin"
	}
	return fmt.Sprintf("role(%d)", int(r))
}

// Allows reports whether r may do what needs the role need.
func (r Role) Allows(need Role) bool { return r >= Viewer && r >= need }

// ParseRole is the role of a name: viewer, operator or admin.
func ParseRole(name string) (Role, error) {
	for _, r := range []Role{Viewer, Operator, Admin} {
		if name == r.String() {
			return r, nil
		}
	}
	return 0, fmt.Errorf("%w %q: want viewer, operator or admin", ErrUnknownRole, name)
}

// CertRole is the role a certificate's OrganizationalUnit grants: a client
// role, or NodeRole, which reads as a viewer (and only relays: Identity.Node).
func CertRole(ou string) (Role, error) {
	if ou == NodeRole {
		return Viewer, nil
	}
	return ParseRole(ou)
}
