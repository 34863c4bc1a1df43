package coord

import (
	"context"
	"net"
	"os"
	"testing"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/gtrain/gtrain/api"
	"github.com/gtrain/gtrain/coord/schema"
	"github.com/gtrain/gtrain/internal/testing/etcdtest"
)

// Every test of this binary shares one embedded etcd: starting a member
// costs about a second, and each test isolates itself under a job name of
// its own.
func TestMain(m *testing.M) {
	os.Exit(etcdtest.Main(m))
}

// dialTest returns a client of its own to the shared etcd, closed with the test.
func dialTest(t *testing.T) *clientv3.Client {
	t.Helper()
	return etcdtest.Dial(t, etcdtest.Shared(t).Endpoint)
}

// freeLocalAddr is a loopback address nobody listens on right now.
func freeLocalAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

// uniqueJob is a job name no other test uses, so tests sharing the etcd never
// see each other's keys.
func uniqueJob(t *testing.T) string { return etcdtest.UniqueName(t) }

// mustPutState writes a job's state record directly, bypassing SetJobState's rules.
func mustPutState(t *testing.T, cli *clientv3.Client, job string, state api.JobState) {
	t.Helper()
	if err := PutJSON(context.Background(), cli, StateKey(job), schema.StateRecord{State: state}); err != nil {
		t.Fatal(err)
	}
}
