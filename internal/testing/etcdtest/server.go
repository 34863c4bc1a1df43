package etcdtest

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"testing"

	"github.com/gtrain/gtrain/internal/embedetcd"
)

// Server is a running single-member etcd.
type Server struct {
	member  *embedetcd.Member
	tempDir string // removed by Close; "" when the test's TempDir holds the data
	// Endpoint is the client URL to dial.
	Endpoint string
}

// Launch starts a member in a temporary directory of its own, removed by
// Close. It is for callers without a testing.TB: TestMain, benchmarks.
func Launch() (*Server, error) {
	dir, err := os.MkdirTemp("", "etcdtest-")
	if err != nil {
		return nil, fmt.Errorf("etcdtest: %w", err)
	}
	s, err := launchIn(dir)
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	s.tempDir = dir
	return s, nil
}

// Start starts a member of the test's own, stopped when the test ends. A
// failed test shows etcd's log.
func Start(t testing.TB) *Server {
	t.Helper()
	s, err := launchIn(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		s.Close()
		if t.Failed() {
			b, _ := os.ReadFile(s.member.LogFile)
			t.Logf("embedded etcd log:\n%s", b)
		}
	})
	return s
}

// launchIn starts a member with its data under dir.
func launchIn(dir string) (*Server, error) {
	client, err := freeLocalAddr()
	if err != nil {
		return nil, err
	}
	peer, err := freeLocalAddr()
	if err != nil {
		return nil, err
	}
	m, err := embedetcd.Start(embedetcd.Config{Dir: filepath.Join(dir, "etcd"), ClientAddr: client, PeerAddr: peer})
	if err != nil {
		return nil, fmt.Errorf("etcdtest: %w", err)
	}
	return &Server{member: m, Endpoint: m.Endpoint}, nil
}

// Close stops the member and removes the data Launch made for it.
func (s *Server) Close() {
	s.member.Close()
	if s.tempDir != "" {
		os.RemoveAll(s.tempDir)
	}
}

// freeLocalAddr is a loopback address nobody listens on right now.
func freeLocalAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("etcdtest: free port: %w", err)
	}
	defer l.Close()
	return l.Addr().String(), nil
}
