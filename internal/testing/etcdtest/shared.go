package etcdtest

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// shared is the package's member: started by the first test that asks,
// stopped by Main.
var shared struct {
	mainRuns bool // Main is running the tests
	once     sync.Once
	server   *Server
	err      error
	fresh    atomic.Bool // a Fresh test holds the member
}

// Main runs the package's tests (call it from TestMain) and then stops the
// shared member, if a test started one. When a test failed, the member's
// data and log are kept and their place is printed.
func Main(m *testing.M) int {
	shared.mainRuns = true
	code := m.Run()
	if s := shared.server; s != nil {
		s.member.Close()
		if code == 0 {
			os.RemoveAll(s.tempDir)
		} else {
			fmt.Fprintf(os.Stderr, "etcdtest: tests failed; the shared etcd's data and log are kept in %s\n", s.tempDir)
		}
	}
	return code
}

// Shared returns the package's member, starting it on first use. Tests
// sharing it must keep to keys of their own (see UniqueName).
func Shared(t testing.TB) *Server {
	t.Helper()
	if !shared.mainRuns {
		t.Fatal("etcdtest.Shared needs a TestMain that calls etcdtest.Main, which stops the member")
	}
	shared.once.Do(func() { shared.server, shared.err = Launch() })
	if shared.err != nil {
		t.Fatal(shared.err)
	}
	return shared.server
}

// Fresh returns the package's member with no keys in it, and empties it
// again when the test ends. Only one test at a time may hold it: parallel
// tests use Shared with keys of their own, or Start.
func Fresh(t testing.TB) *Server {
	t.Helper()
	s := Shared(t)
	if !shared.fresh.CompareAndSwap(false, true) {
		t.Fatal("etcdtest.Fresh: another test holds the shared etcd; parallel tests need Shared with keys of their own, or Start")
	}
	cli := Dial(t, s.Endpoint)
	empty(t, cli)
	t.Cleanup(func() {
		empty(t, cli)
		shared.fresh.Store(false)
	})
	return s
}

// empty deletes every key.
func empty(t testing.TB, cli *clientv3.Client) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := cli.Delete(ctx, "", clientv3.WithPrefix()); err != nil {
		t.Fatalf("etcdtest: emptying the shared etcd: %v", err)
	}
}

// Dial returns a client of the test's own to endpoint, closed when the test
// ends. It fails the test unless etcd answers.
func Dial(t testing.TB, endpoint string) *clientv3.Client {
	t.Helper()
	cli, err := clientv3.New(clientv3.Config{Endpoints: []string{endpoint}, DialTimeout: 5 * time.Second})
	if err != nil {
		t.Fatalf("etcdtest: dial %s: %v", endpoint, err)
	}
	t.Cleanup(func() { cli.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := cli.Get(ctx, "etcdtest-ping"); err != nil {
		t.Fatalf("etcdtest: etcd at %s does not answer: %v", endpoint, err)
	}
	return cli
}

var nameSeq atomic.Int64

// UniqueName is a lower-case name, made of the test's name and a sequence
// number, that no other test of the binary gets: a job name or key prefix
// that keeps tests sharing a member apart.
func UniqueName(t testing.TB) string {
	name := strings.ToLower(strings.NewReplacer("/", "-", "_", "-").Replace(t.Name()))
	return fmt.Sprintf("%s-%d", name, nameSeq.Add(1))
}
