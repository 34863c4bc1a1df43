package controlapi

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"

	"github.com/gtrain/gtrain/auth"
)

// MsgNoCredentials is the answer to a caller that shows nothing on an agent
// with TLS.
const MsgNoCredentials = "this agent requires a client certificate or a bearer token; set tls.cert/tls.key or token in your gctl context"

// MsgNoIdentity is the answer to a caller of an agent that has no way to
// tell who it is (no TLS) and serves no anonymous callers.
const MsgNoIdentity = "this agent cannot identify callers (no TLS) and serves no anonymous ones; start it with --tls-ca/--tls-cert/--tls-key, or with --dev or --insecure"

// authorizer finds the caller of each Control API call and checks its role
// against controlRules before the handler runs (issue 10, authorization).
type authorizer struct {
	tokens *auth.Verifier // verifies bearer tokens; nil: no TLS
	// anonymous serves a caller without credentials as the anonymous
	// admin (no TLS, --dev or --insecure); otherwise it is refused.
	anonymous bool
	log       *slog.Logger
}

// newAuthorizer reads every CA certificate of the cluster CA file caFile,
// if any; revoked says which token ids were revoked.
func newAuthorizer(caFile string, anonymous bool, maxLifetime time.Duration, revoked func(string) bool, log *slog.Logger) (*authorizer, error) {
	z := &authorizer{log: log}
	if caFile == "" {
		z.anonymous = anonymous
		return z, nil
	}
	cas, err := auth.ReadCertificates(caFile)
	if err != nil {
		return nil, fmt.Errorf("--tls-ca: %w", err)
	}
	z.tokens = &auth.Verifier{CAs: cas, MaxLifetime: maxLifetime, Revoked: revoked}
	return z, nil
}

// serverOptions installs the checks on a gRPC server.
func (z *authorizer) serverOptions() []grpc.ServerOption {
	return []grpc.ServerOption{grpc.ChainUnaryInterceptor(z.unary), grpc.ChainStreamInterceptor(z.stream)}
}

// identify is the caller: a verified client certificate, else a bearer
// token signed by the cluster CA, else a caller on the agent's Unix socket
// (mode 0600: the agent's user or root) as the local admin, else (an agent
// without TLS in --dev or --insecure mode) anonymous; else it is refused.
func (z *authorizer) identify(ctx context.Context) (auth.Identity, error) {
	p, _ := peer.FromContext(ctx)
	if p != nil {
		if ti, ok := p.AuthInfo.(credentials.TLSInfo); ok && len(ti.State.VerifiedChains) > 0 {
			id, err := auth.FromCertificate(ti.State.VerifiedChains[0][0])
			if err != nil {
				return id, status.Errorf(codes.Unauthenticated, "client certificate refused: %v", err)
			}
			return id, nil
		}
	}
	token, err := bearerToken(ctx)
	if err != nil {
		return auth.Identity{}, err
	}
	switch {
	case token != "" && z.tokens != nil:
	case p != nil && p.Addr != nil && p.Addr.Network() == "unix":
		return auth.Local(), nil
	case z.tokens == nil && z.anonymous:
		return auth.Anonymous(), nil
	case z.tokens == nil:
		return auth.Identity{}, status.Error(codes.Unauthenticated, MsgNoIdentity)
	default:
		return auth.Identity{}, status.Error(codes.Unauthenticated, MsgNoCredentials)
	}
	id, err := z.tokens.Verify(token)
	if errors.Is(err, auth.ErrRevokedToken) {
		return id, status.Errorf(codes.Unauthenticated, "%v; ask an admin for a new token", err)
	}
	if err != nil {
		return id, status.Errorf(codes.Unauthenticated,
			"%v; ask an admin for a new token (`gtraind cert issue --client NAME --role ROLE`)", err)
	}
	return id, nil
}

// bearerToken is the token of the call's "authorization: Bearer T"
// metadata; "" when there is none.
func bearerToken(ctx context.Context) (string, error) {
	values := metadata.ValueFromIncomingContext(ctx, "authorization")
	if len(values) == 0 {
		return "", nil
	}
	scheme, token, ok := strings.Cut(values[0], " ")
	if !ok || !strings.EqualFold(scheme, "bearer") || strings.TrimSpace(token) == "" {
		return "", status.Error(codes.Unauthenticated, `the authorization metadata is not "Bearer TOKEN"`)
	}
	return strings.TrimSpace(token), nil
}

// check identifies the caller of method and decides whether it may make
// the call req (nil for a stream).
func (z *authorizer) check(ctx context.Context, method string, req any) (auth.Identity, access, error) {
	id, err := z.identify(ctx)
	if err != nil {
		z.log.Warn("call refused", "method", method, "err", err)
		return id, access{}, err
	}
	rule, ok := controlRules[method]
	if !ok {
		return id, access{}, status.Errorf(codes.PermissionDenied, "%s: no authorization rule for this call; refused", method)
	}
	acc := rule(req)
	if id.Node && !nodeCalls[method] {
		return id, acc, status.Errorf(codes.PermissionDenied,
			"%s may not %s: a node's certificate only relays logs and models between agents; call with a client certificate or a bearer token (`gtraind cert issue --client NAME --role ROLE`)",
			id, acc.what)
	}
	if !id.Role.Allows(acc.need) {
		return id, acc, status.Errorf(codes.PermissionDenied, "%s may not %s: needs %s", id, acc.what, acc.need)
	}
	return id, acc, nil
}

func (z *authorizer) unary(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	id, acc, err := z.check(ctx, info.FullMethod, req)
	if err != nil {
		z.audit(id, acc, auditTarget(req, nil), err)
		return nil, err
	}
	resp, err := handler(auth.NewContext(ctx, id), req)
	z.audit(id, acc, auditTarget(req, resp), err)
	return resp, err
}

func (z *authorizer) stream(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
	id, acc, err := z.check(ss.Context(), info.FullMethod, nil)
	if err != nil {
		z.audit(id, acc, "", err)
		return err
	}
	err = handler(srv, &identifiedStream{ServerStream: ss, ctx: auth.NewContext(ss.Context(), id)})
	z.audit(id, acc, "", err)
	return err
}

// identifiedStream is a stream whose context carries the caller.
type identifiedStream struct {
	grpc.ServerStream
	ctx context.Context
}

func (s *identifiedStream) Context() context.Context { return s.ctx }

// caller is the identity the authorizer put in ctx. A handler reached
// without one (called without the interceptor) gets a caller with no role,
// which may do nothing, never the anonymous admin.
func caller(ctx context.Context) auth.Identity {
	if id, ok := auth.FromContext(ctx); ok {
		return id
	}
	return auth.Identity{Name: "unidentified", Via: auth.ViaNone}
}
