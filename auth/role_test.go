package auth

import (
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"testing"
)

func TestRoleOrder(t *testing.T) {
	for _, c := range []struct {
		have, need Role
		ok         bool
	}{
		{Viewer, Viewer, true}, {Viewer, Operator, false}, {Operator, Viewer, true},
		{Operator, Admin, false}, {Admin, Operator, true}, {0, Viewer, false}, {0, 0, false},
	} {
		if got := c.have.Allows(c.need); got != c.ok {
			t.Errorf("%s allows %s: got %v, want %v", c.have, c.need, got, c.ok)
		}
	}
}

func TestFromCertificate(t *testing.T) {
	cert := func(cn string, ou ...string) *x509.Certificate {
		return &x509.Certificate{Subject: pkix.Name{CommonName: cn, OrganizationalUnit: ou}}
	}
	for _, c := range []struct {
		cert *x509.Certificate
		want Identity
		err  error
	}{
		{cert("alice", "operator"), Identity{Name: "alice", Role: Operator, Via: ViaCertificate}, nil},
		{cert("n1", "node"), Identity{Name: "n1", Role: Viewer, Via: ViaCertificate, Node: true}, nil},
		{cert("bob", "viewer", "admin"), Identity{Name: "bob", Role: Viewer, Via: ViaCertificate}, nil},
		{cert("eve", "root"), Identity{}, ErrUnknownRole},
		{cert("eve"), Identity{}, ErrNoRole},
		{cert("", "admin"), Identity{}, ErrNoRole},
	} {
		id, err := FromCertificate(c.cert)
		if id != c.want || !errors.Is(err, c.err) {
			t.Errorf("%v: got %+v, %v; want %+v, %v", c.cert.Subject, id, err, c.want, c.err)
		}
	}
}
