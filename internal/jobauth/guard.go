package jobauth

import (
	"context"
	"crypto/hmac"
	"encoding/base64"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"

	"github.com/gtrain/gtrain/pki"
)

// Guard admits to a master's or pserver's server only the calls of its
// job's roles.
type Guard struct {
	job    string
	secret []byte // nil: the certificate alone is checked
	tls    bool   // the server runs mutual TLS
}

// NewGuard checks calls for job with its secret; tls says the server
// serves mutual TLS, so a caller must show a node certificate.
func NewGuard(job string, secret []byte, tls bool) *Guard {
	return &Guard{job: job, secret: secret, tls: tls}
}

// Unary is the check as a unary interceptor.
func (g *Guard) Unary(ctx context.Context, req any, _ *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
	if err := g.Check(ctx); err != nil {
		return nil, err
	}
	return h(ctx, req)
}

// Stream is the check as a stream interceptor.
func (g *Guard) Stream(srv any, ss grpc.ServerStream, _ *grpc.StreamServerInfo, h grpc.StreamHandler) error {
	if err := g.Check(ss.Context()); err != nil {
		return err
	}
	return h(srv, ss)
}

// Check refuses a call that is not of a role of g's job: Unauthenticated
// without a verified certificate (TLS) or a credential that verifies,
// PermissionDenied for a certificate that is not a node's or a credential
// of another job.
func (g *Guard) Check(ctx context.Context) error {
	if g.tls {
		cert := pki.PeerCert(ctx)
		if cert == nil {
			return status.Errorf(codes.Unauthenticated, "no verified client certificate: only the roles of job %s, with their node's certificate, may call", g.job)
		}
		if name, role := pki.Identity(cert); role != pki.RoleNode {
			return status.Errorf(codes.PermissionDenied, "%s's certificate is a %q one, not a node's: only the roles of job %s may call", name, role, g.job)
		}
	}
	if g.secret == nil {
		return nil
	}
	md, _ := metadata.FromIncomingContext(ctx)
	job, tok := first(md, JobKey), first(md, TokenKey)
	if job == "" || tok == "" {
		return status.Errorf(codes.Unauthenticated, "no job credential: only the roles of job %s may call", g.job)
	}
	if job != g.job {
		return status.Errorf(codes.PermissionDenied, "a credential of job %q: this server is job %s's", job, g.job)
	}
	got, err := base64.RawStdEncoding.DecodeString(tok)
	if err != nil {
		return status.Errorf(codes.Unauthenticated, "the job credential is not base64: only the roles of job %s may call", g.job)
	}
	var info credentials.AuthInfo
	if p, ok := peer.FromContext(ctx); ok {
		info = p.AuthInfo
	}
	b, err := binding(info)
	if err != nil {
		return status.Error(codes.Unauthenticated, err.Error())
	}
	if !hmac.Equal(got, token(g.secret, g.job, b)) {
		return status.Errorf(codes.Unauthenticated, "the job credential does not verify: only the roles of job %s may call", g.job)
	}
	return nil
}

func first(md metadata.MD, key string) string {
	if v := md.Get(key); len(v) > 0 {
		return v[0]
	}
	return ""
}
