package pserver

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gtrain/gtrain/api"
	"github.com/gtrain/gtrain/internal/jobauth"
	"github.com/gtrain/gtrain/internal/testing/testpki"
	"github.com/gtrain/gtrain/jobspec"
	"github.com/gtrain/gtrain/pserver/client"
	"github.com/gtrain/gtrain/pserver/wire"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
)

// TestLocalSocketServesUnderTheTCPName: a client given a pserver's socket
// reaches it there alone (its TCP address leads nowhere) over mutual TLS,
// the certificate checked against the TCP address's name, and the socket
// only lets its owner connect.
func TestLocalSocketServesUnderTheTCPName(t *testing.T) {
	path := filepath.Join(t.TempDir(), "jobs", "j", "pserver-0.sock")
	lis, err := listenUnix(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("socket %s: %v, mode %v; want 0600", path, err, fi.Mode())
	}
	ca := testpki.New(t)
	s := testShard(t, jobspec.ModeSync, 1, "sgd")
	srv := grpc.NewServer(append(wire.ServerOptions(), grpc.Creds(credentials.NewTLS(ca.ServerTLS(t, "n1"))))...)
	api.RegisterPServerServer(srv, NewServer(0, s, nil, nil))
	go func() { _ = srv.Serve(lis) }()
	t.Cleanup(srv.Stop)
	// 127.0.0.1:1 refuses connections: only the socket answers; the node
	// certificate names 127.0.0.1.
	creds := jobauth.Dial{Transport: credentials.NewTLS(ca.ClientTLS(ca.Issue(t, "trainer", "role")))}
	c, err := client.NewClientTo([]client.Target{{Addr: "127.0.0.1:1", Socket: path}}, s.Blocks(), creds)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	params := [][]float32{make([]float32, 5), make([]float32, 3)}
	if _, _, err := c.Pull(context.Background(), 0, 0, params); err != nil {
		t.Fatalf("pull through the socket: %v", err)
	}
	if params[0][4] != 4 || params[1][2] != 12 { // testShard's values: param*10 + index
		t.Errorf("pulled %v, want the shard's initial values", params)
	}
}

// TestListenUnixRefusesALongPath: a path sun_path cannot hold is refused
// (the pserver then serves on TCP alone), not truncated.
func TestListenUnixRefusesALongPath(t *testing.T) {
	long := filepath.Join(t.TempDir(), strings.Repeat("d", maxSocketPath), "pserver-0.sock")
	if lis, err := listenUnix(long); err == nil {
		lis.Close()
		t.Fatalf("listenUnix(%d bytes) succeeded", len(long))
	}
}
