package controlapi

import (
	"context"
	"log/slog"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/gtrain/gtrain/auth"
)

// Without TLS a caller is the anonymous admin only where the agent allows
// it (--dev, --insecure); otherwise it is refused. A handler reached with
// no identity in its context gets a caller that may do nothing.
func TestNoAnonymousAdmin(t *testing.T) {
	for _, allow := range []bool{false, true} {
		z, err := newAuthorizer("", allow, 0, nil, slog.Default())
		if err != nil {
			t.Fatal(err)
		}
		id, err := z.identify(context.Background())
		switch {
		case allow && (err != nil || id != auth.Anonymous()):
			t.Errorf("anonymous allowed: %+v, %v; want the anonymous admin", id, err)
		case !allow && status.Code(err) != codes.Unauthenticated:
			t.Errorf("anonymous not allowed: %+v, %v; want Unauthenticated", id, err)
		}
	}
	if who := caller(context.Background()); who.Role.Allows(auth.Viewer) {
		t.Errorf("a handler without an identity runs as %+v", who)
	}
}
