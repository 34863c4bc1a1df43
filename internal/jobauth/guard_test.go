package jobauth

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"

	"github.com/gtrain/gtrain/internal/testing/testpki"
	"github.com/gtrain/gtrain/pki"
)

// serve starts a health service behind r's ServerOptions on loopback.
func serve(t *testing.T, r Role) string {
	t.Helper()
	opts, err := r.ServerOptions()
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer(opts...)
	healthpb.RegisterHealthServer(srv, health.NewServer())
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(lis)
	t.Cleanup(srv.Stop)
	return lis.Addr().String()
}

// call makes one unary and one streaming call with d and returns their
// codes.
func call(t *testing.T, addr string, d Dial) (unary, stream codes.Code) {
	t.Helper()
	conn, err := grpc.NewClient(addr, d.Options()...)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	c := healthpb.NewHealthClient(conn)
	_, err = c.Check(ctx, &healthpb.HealthCheckRequest{})
	unary = status.Code(err)
	w, err := c.Watch(ctx, &healthpb.HealthCheckRequest{})
	if err == nil {
		_, err = w.Recv()
	}
	return unary, status.Code(err)
}

func secret(t *testing.T) []byte {
	t.Helper()
	s, err := NewSecret()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// With TLS, only a node certificate with its job's credential gets an
// answer; without a certificate, with an operator's, without a
// credential, with another job's or a forged one, every call is refused.
func TestGuardTLS(t *testing.T) {
	ca := testpki.New(t)
	cert, key := ca.WriteNode(t, "n1")
	files := pki.Files{CA: ca.File, Cert: cert, Key: key}
	jobA, jobB := secret(t), secret(t)
	addr := serve(t, Role{TLS: files, Job: "a", Secret: jobA})
	nodeTLS, err := files.ClientCreds()
	if err != nil {
		t.Fatal(err)
	}
	noCert := credentials.NewTLS(ca.ClientTLS())
	operator := credentials.NewTLS(ca.ClientTLS(ca.Issue(t, "alice", "operator")))
	for _, c := range []struct {
		name string
		dial Dial
		want codes.Code
	}{
		{"no certificate", Dial{Transport: noCert, Job: PerRPC("a", jobA)}, codes.Unavailable},
		{"an operator's certificate", Dial{Transport: operator, Job: PerRPC("a", jobA)}, codes.PermissionDenied},
		{"no job credential", Dial{Transport: nodeTLS}, codes.Unauthenticated},
		{"job b's credential", Dial{Transport: nodeTLS, Job: PerRPC("b", jobB)}, codes.PermissionDenied},
		{"job b's secret under job a's name", Dial{Transport: nodeTLS, Job: PerRPC("a", jobB)}, codes.Unauthenticated},
		{"a token of another connection", Dial{Transport: nodeTLS, Job: replayed(t, addr, nodeTLS, jobA)}, codes.Unauthenticated},
		{"job a's credential", Dial{Transport: nodeTLS, Job: PerRPC("a", jobA)}, codes.OK},
	} {
		if u, s := call(t, addr, c.dial); u != c.want || s != c.want {
			t.Errorf("%s: unary %s, stream %s; want %s", c.name, u, s, c.want)
		}
	}
}

// replayed is the metadata job a's credential sent on one connection, to
// be sent as is on another.
func replayed(t *testing.T, addr string, creds credentials.TransportCredentials, secret []byte) credentials.PerRPCCredentials {
	rec := &recorder{inner: PerRPC("a", secret)}
	if u, _ := call(t, addr, Dial{Transport: creds, Job: rec}); u != codes.OK {
		t.Fatalf("the recorded call: %s", u)
	}
	return fixed(rec.md)
}

type recorder struct {
	inner credentials.PerRPCCredentials
	md    map[string]string
}

func (r *recorder) GetRequestMetadata(ctx context.Context, uri ...string) (map[string]string, error) {
	md, err := r.inner.GetRequestMetadata(ctx, uri...)
	r.md = md
	return md, err
}
func (r *recorder) RequireTransportSecurity() bool { return false }

type fixed map[string]string

func (f fixed) GetRequestMetadata(context.Context, ...string) (map[string]string, error) {
	return f, nil
}
func (fixed) RequireTransportSecurity() bool { return false }

// Without TLS (a dev cluster) the credential is still checked.
func TestGuardPlaintext(t *testing.T) {
	jobA := secret(t)
	addr := serve(t, Role{Job: "a", Secret: jobA})
	for _, c := range []struct {
		name string
		dial Dial
		want codes.Code
	}{
		{"no job credential", Dial{}, codes.Unauthenticated},
		{"job b's credential", Dial{Job: PerRPC("b", secret(t))}, codes.PermissionDenied},
		{"job a's credential", Dial{Job: PerRPC("a", jobA)}, codes.OK},
	} {
		if u, s := call(t, addr, c.dial); u != c.want || s != c.want {
			t.Errorf("%s: unary %s, stream %s; want %s", c.name, u, s, c.want)
		}
	}
}

// The file the agent writes is 0600 and reads back; a file that is not a
// secret is refused by name.
func TestSecretFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "credential")
	s := secret(t)
	if err := WriteFile(path, s); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("the credential file: %v, %v; want mode 0600", fi, err)
	}
	r, err := LoadRole(pki.Files{}, "a", path)
	if err != nil || string(r.Secret) != string(s) {
		t.Fatalf("LoadRole: %x, %v; want %x", r.Secret, err, s)
	}
	if err := WriteFile(path, []byte("short")); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadFile(path); err == nil {
		t.Error("ReadFile of a 5-byte secret: no error")
	}
}
