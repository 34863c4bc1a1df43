package netcluster

import (
	"context"
	"testing"
)

// A cluster's hosts reach each other on the bridge: its etcd members form
// one cluster (over TLS, with auth on), and the client namespace reaches them.
func TestClusterEtcd(t *testing.T) {
	if testing.Short() {
		t.Skip("makes network namespaces")
	}
	if err := Available(); err != nil {
		t.Skipf("SKIPPED, NOT TESTED: %v", err)
	}
	c, err := New(Options{Hosts: 3, Dir: t.TempDir(), Etcd: EtcdPassword})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	cli, err := c.EtcdClient(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	resp, err := cli.MemberList(context.Background())
	if err != nil || len(resp.Members) != 3 {
		t.Fatalf("member list: %v %v", resp, err)
	}
	if _, err := cli.Put(context.Background(), "netcluster-probe", "ok"); err != nil {
		t.Errorf("put as the cluster's user: %v", err)
	}
}
