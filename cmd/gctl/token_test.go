package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/gtrain/gtrain/api"
	"github.com/gtrain/gtrain/auth"
	"github.com/gtrain/gtrain/internal/testing/testpki"
)

// startTLSAgent serves f over TLS with the CA's node certificate. Its
// interceptor stands in for the agent's authorization: it verifies the
// bearer token and lets viewers only read (the real rules are tested in
// package daemon).
func startTLSAgent(t *testing.T, ca *testpki.CA, f *fakeAgent) string {
	t.Helper()
	check := func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
		v := metadata.ValueFromIncomingContext(ctx, "authorization")
		if len(v) == 0 {
			return nil, status.Error(codes.Unauthenticated, "this agent requires a client certificate or a bearer token")
		}
		id, err := auth.VerifyToken(ca.Cert, strings.TrimPrefix(v[0], "Bearer "))
		if err != nil {
			return nil, status.Error(codes.Unauthenticated, err.Error())
		}
		if info.FullMethod == api.Control_StopJob_FullMethodName && !id.Role.Allows(auth.Operator) {
			return nil, status.Errorf(codes.PermissionDenied, "%s may not stop jobs: needs operator", id)
		}
		return handler(ctx, req)
	}
	srv := grpc.NewServer(grpc.Creds(credentials.NewTLS(ca.ServerTLS(t, "node-a"))), grpc.UnaryInterceptor(check))
	api.RegisterControlServer(srv, f)
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = srv.Serve(lis) }()
	t.Cleanup(srv.Stop)
	return lis.Addr().String()
}

// A context's token file (as `gtraind cert issue --client` writes it)
// reaches the agent over TLS; the agent's refusals end gctl with exit 1
// and its message.
func TestTokenOverTLS(t *testing.T) {
	ca := testpki.New(t)
	dir := t.TempDir()
	if _, _, err := auth.WriteClientToken(dir, ca.File, ca.WriteKey(t), "vera", auth.Viewer, time.Hour); err != nil {
		t.Fatal(err)
	}
	addr := startTLSAgent(t, ca, &fakeAgent{jobs: []api.JobRow{{Name: "fit", State: api.StateRunning}}})
	cfg := writeFile(t, filepath.Join(dir, "config.yaml"), fmt.Sprintf(`current-context: vera
contexts:
  - {name: vera, endpoint: %q, tls: {ca: %q}, token_file: vera.token}
  - {name: none, endpoint: %q, tls: {ca: %q}}
`, addr, ca.File, addr, ca.File))

	a, stdout, stderr := newTestApp(t)
	r := runGctl(t, a, stdout, stderr, "--config", cfg, "job", "list")
	wantRun(t, r, exitOK, []string{"fit"}, nil)

	a, stdout, stderr = newTestApp(t)
	r = runGctl(t, a, stdout, stderr, "--config", cfg, "job", "stop", "fit")
	wantRun(t, r, exitFailure, nil, []string{"vera (viewer) may not stop jobs: needs operator"})

	a, stdout, stderr = newTestApp(t)
	r = runGctl(t, a, stdout, stderr, "--config", cfg, "--context", "none", "job", "list")
	wantRun(t, r, exitFailure, nil, []string{"requires a client certificate or a bearer token", "token of your context"})
}

// A token goes only over TLS: a context with a token and no tls files is
// refused before anything is sent, as is one with two tokens.
func TestTokenConfigErrors(t *testing.T) {
	dir := filepath.Dir(testpki.New(t).File) // holds ca.crt
	for name, c := range map[string]struct {
		context string
		want    string
	}{
		"plaintext":      {`{name: a, endpoint: "127.0.0.1:1", token: abc}`, "only sent over TLS"},
		"both":           {`{name: a, endpoint: "127.0.0.1:1", tls: {ca: ca.crt}, token: abc, token_file: t}`, "both token and token_file"},
		"missing file":   {`{name: a, endpoint: "127.0.0.1:1", tls: {ca: ca.crt}, token_file: nope.token}`, "nope.token"},
		"empty file":     {`{name: a, endpoint: "127.0.0.1:1", tls: {ca: ca.crt}, token_file: empty.token}`, "is empty"},
		"plaintext file": {`{name: a, endpoint: "127.0.0.1:1", token_file: empty.token}`, "is empty"},
	} {
		t.Run(name, func(t *testing.T) {
			writeFile(t, filepath.Join(dir, "empty.token"), "\n")
			cfg := writeFile(t, filepath.Join(dir, "c.yaml"), "current-context: a\ncontexts: ["+c.context+"]\n")
			s, err := settingsFor(t, t.TempDir(), nil, "--config", cfg)
			if err == nil {
				_, _, err = dialAgent(s)
			}
			if !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), c.want) || exitCode(err) != exitRejected {
				t.Errorf("got %v (exit %d), want ErrConfig naming %q", err, exitCode(err), c.want)
			}
		})
	}
}
