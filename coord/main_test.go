package coord

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/gtrain/gtrain/api"
)

// testEndpoint is the client URL of the one embedded etcd shared by every
// test of this binary: starting a member costs about a second, and each test
// isolates itself under a job name of its own.
var testEndpoint string

func TestMain(m *testing.M) {
	os.Exit(runWithEtcd(m))
}

func runWithEtcd(m *testing.M) int {
	dir, err := os.MkdirTemp("", "coord-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "coord tests:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	client, err := freeLocalAddr()
	if err != nil {
		fmt.Fprintln(os.Stderr, "coord tests:", err)
		return 1
	}
	peer, err := freeLocalAddr()
	if err != nil {
		fmt.Fprintln(os.Stderr, "coord tests:", err)
		return 1
	}
	e, err := StartEmbedded(EmbeddedConfig{Dir: filepath.Join(dir, "etcd"), ClientAddr: client, PeerAddr: peer}, nil)
	if err != nil {
		fmt.Fprintln(os.Stderr, "coord tests:", err)
		return 1
	}
	defer e.Close()
	testEndpoint = e.Endpoint
	return m.Run()
}

func freeLocalAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

// dialTest returns a client of its own to the shared etcd, closed with the test.
func dialTest(t *testing.T) *clientv3.Client {
	t.Helper()
	cli, err := Dial(t.Context(), []string{testEndpoint}, nil)
	if err != nil {
		t.Fatalf("dial shared etcd: %v", err)
	}
	t.Cleanup(func() { cli.Close() })
	return cli
}

var jobSeq atomic.Int64

// uniqueJob is a job name no other test uses, so tests sharing the etcd never
// see each other's keys.
func uniqueJob(t *testing.T) string {
	name := strings.ToLower(strings.NewReplacer("/", "-", "_", "-").Replace(t.Name()))
	return fmt.Sprintf("%s-%d", name, jobSeq.Add(1))
}

// mustPutState writes a job's state record directly, bypassing SetJobState's rules.
func mustPutState(t *testing.T, cli *clientv3.Client, job string, state api.JobState) {
	t.Helper()
	if err := PutJSON(context.Background(), cli, StateKey(job), StateRecord{State: state}); err != nil {
		t.Fatal(err)
	}
}
