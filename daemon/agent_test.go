package daemon

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/gtrain/gtrain/api"
	"github.com/gtrain/gtrain/coord"
	"github.com/gtrain/gtrain/coord/schema"
	"github.com/gtrain/gtrain/internal/jobdir"
)

// A second agent with the name of a live one refuses to start.
func TestDuplicateNodeNameRefused(t *testing.T) {
	t.Parallel()
	endpoint := startEtcd(t)
	a := startAgent(t, testConfig(t, "twin", endpoint))
	err := Run(context.Background(), testConfig(t, "twin", endpoint), func(string) {
		t.Error("the second agent became ready")
	})
	if !errors.Is(err, ErrNodeNameTaken) || !strings.Contains(err.Error(), a.addr) || !strings.Contains(err.Error(), "--node-name") {
		t.Errorf("second agent: %v, want ErrNodeNameTaken naming %s and --node-name", err, a.addr)
	}
}

// When the node's lease is lost (etcd unreachable too long), the agent
// registers again.
func TestReregistersAfterLeaseLoss(t *testing.T) {
	t.Parallel()
	endpoint := startEtcd(t)
	cli := etcdClient(t, endpoint)
	a := startAgent(t, testConfig(t, "n1", endpoint))
	ctx := context.Background()
	resp, err := cli.Get(ctx, coord.NodeKey("n1"))
	if err != nil || len(resp.Kvs) != 1 {
		t.Fatalf("node record: %v %v", resp, err)
	}
	lease := clientv3.LeaseID(resp.Kvs[0].Lease)
	if _, err := cli.Revoke(ctx, lease); err != nil {
		t.Fatal(err)
	}
	var rec schema.NodeRecord
	eventually(t, 15*time.Second, func() (bool, string) {
		resp, err := cli.Get(ctx, coord.NodeKey("n1"))
		if err != nil || len(resp.Kvs) != 1 || clientv3.LeaseID(resp.Kvs[0].Lease) == lease {
			return false, "node record not back under a new lease"
		}
		_, err = coord.GetJSON(ctx, cli, coord.NodeKey("n1"), &rec)
		return err == nil, "decode: " + errString(err)
	})
	if rec.APIAddr != a.addr || rec.State != api.NodeReady || !strings.Contains(rec.GossipAddr, "127.0.0.1:") || strings.HasSuffix(rec.GossipAddr, ":0") {
		t.Errorf("record after re-registering = %+v", rec)
	}
}

// Two agents on one etcd: a job with a shared checkpoint.dir is spread
// over both, each runs its own workers, and a log is asked for where it is
// kept.
func TestTwoNodes(t *testing.T) {
	t.Parallel()
	endpoint := startEtcd(t)
	cli := etcdClient(t, endpoint)
	a := startAgent(t, testConfig(t, "n1", endpoint))
	b := startAgent(t, testConfig(t, "n2", endpoint))
	ctx := context.Background()
	const job = "sleep-two"
	submitSpec(t, b, job, 2, 1, withCheckpointDir(t.TempDir()))
	recs := allInState(t, cli, job, api.WorkerRunning, "master", "pserver-0", "trainer-0", "trainer-1")
	want := map[string]string{"master": "n1", "pserver-0": "n2", "trainer-0": "n2", "trainer-1": "n1"}
	for w, node := range want {
		if recs[w].Node != node {
			t.Errorf("%s runs on %s, want %s", w, recs[w].Node, node)
		}
	}
	var nodes []api.NodeRow
	getDoc(t, "list nodes", func() (*api.Document, error) { return a.client.ListNodes(ctx, &api.ListNodesRequest{}) }, &nodes)
	if len(nodes) != 2 || nodes[0].Name != "n1" || nodes[1].Name != "n2" || nodes[1].Addr != b.addr ||
		!slices.Equal(nodes[1].Roles, []string{job + "/pserver-0", job + "/trainer-0"}) {
		t.Errorf("nodes = %+v", nodes)
	}
	// n1's agent fetches the log that n2 keeps (logs_test.go tests it more).
	eventually(t, 10*time.Second, func() (bool, string) {
		got := streamLogs(t, a, &api.LogsRequest{Job: job, Worker: "trainer-0", Lines: 1})
		return len(got) == 1 && strings.HasPrefix(got["trainer-0"], "tick "), fmt.Sprintf("log of trainer-0 through n1's agent = %q, want its last tick", got)
	})
	if _, err := os.Stat(jobdir.WorkerLog(a.cfg.DataDir, job, "trainer-0")); err == nil {
		t.Error("n1 keeps a log of trainer-0, which runs on n2")
	}
}

func TestConfigValidate(t *testing.T) {
	valid := DefaultConfig()
	valid.Dev = true
	if err := valid.Validate(); err != nil {
		t.Fatalf("default --dev config: %v", err)
	}
	for _, tc := range []struct {
		name     string
		edit     func(*Config)
		contains string
	}{
		{"no etcd", func(c *Config) { c.Dev = false }, "--etcd-endpoints"},
		{"no etcd mentions dev", func(c *Config) { c.Dev = false }, "--dev"},
		{"dev and endpoints", func(c *Config) { c.EtcdEndpoints = []string{"http://e:2379"} }, "both given"},
		{"empty data dir", func(c *Config) { c.DataDir = "" }, "--data-dir"},
		{"node name with slash", func(c *Config) { c.NodeName = "a/b" }, "--node-name"},
		{"empty node name", func(c *Config) { c.NodeName = "" }, "NodeName"},
		{"api addr", func(c *Config) { c.APIAddr = "7164" }, "--api-addr"},
		{"gossip addr", func(c *Config) { c.GossipAddr = "" }, "--gossip-addr"},
		{"join", func(c *Config) { c.Join = []string{"peer"} }, "--join"},
		{"etcd client addr", func(c *Config) { c.EtcdClientAddr = "x" }, "--etcd-client-addr"},
		{"negative grace", func(c *Config) { c.StopGrace = -time.Second }, "StopGrace"},
		{"negative cpu", func(c *Config) { c.CPU = -1 }, "--cpu"},
		{"negative memory", func(c *Config) { c.Memory = -1 }, "--memory"},
		{"label with a space", func(c *Config) { c.Labels = map[string]string{"zone": "a b"} }, "--labels"},
	} {
		c := valid
		tc.edit(&c)
		err := c.Validate()
		if !errors.Is(err, ErrInvalidConfig) || !strings.Contains(err.Error(), tc.contains) {
			t.Errorf("%s: %v, want ErrInvalidConfig naming %q", tc.name, err, tc.contains)
		}
	}
	remote := DefaultConfig()
	remote.EtcdEndpoints = []string{"http://10.0.0.1:2379"}
	if err := remote.Validate(); err == nil || !strings.Contains(err.Error(), "--insecure") {
		t.Errorf("config with endpoints, no TLS: %v, want a refusal naming --insecure", err)
	}
	remote.Insecure = true
	if err := remote.Validate(); err != nil {
		t.Errorf("config with endpoints, --insecure: %v", err)
	}
	d := DefaultConfig()
	if d.DataDir != "/var/lib/gtrain" || d.APIAddr != "127.0.0.1:7164" || d.GossipAddr != "127.0.0.1:7946" ||
		d.EtcdClientAddr != "127.0.0.1:2379" || d.EtcdPeerAddr != "127.0.0.1:2380" || d.NodeName == "" ||
		d.SessionTTL != 4 || d.GPUs != -1 || d.StopGrace != 10*time.Second {
		t.Errorf("DefaultConfig = %+v, want the defaults of docs/reference.md#gtraind-agent", d)
	}
	if err := Run(context.Background(), Config{}, nil); !errors.Is(err, ErrInvalidConfig) {
		t.Errorf("Run with an empty config: %v, want ErrInvalidConfig", err)
	}
}
