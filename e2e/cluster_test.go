package e2e

import (
	"context"
	"net"
	"slices"
	"testing"
	"time"

	"github.com/gtrain/gtrain/api"
	"github.com/gtrain/gtrain/internal/etcdproc"
	"github.com/gtrain/gtrain/internal/netcluster"
)

// TestClusterSyncJobAcrossHosts: three hosts (network namespaces with
// addresses of their own on a bridge), a 3-member etcd, an agent on each.
// The nodes publish their hosts' addresses, a sync job's roles spread over
// the hosts and serve on their own host's address, and the job SUCCEEDS
// with every record applied exactly once.
func TestClusterSyncJobAcrossHosts(t *testing.T) {
	hc := startHostCluster(t)
	var nodes []api.NodeRow
	hc.jsonOf(t, 1, &nodes, "node", "list")
	if len(nodes) != 3 {
		t.Fatalf("node list: %+v, want 3 nodes", nodes)
	}
	for _, n := range nodes {
		h := hc.host(t, n.Name)
		if n.State != api.NodeReady || n.Addr != net.JoinHostPort(h.IP, netcluster.APIPort) {
			t.Errorf("node %s: state %s addr %s, want ready at %s:%s", n.Name, n.State, n.Addr, h.IP, netcluster.APIPort)
		}
	}

	hc.submit(t, 1, "across")
	st := hc.waitFor(t, 1, "across", "all pservers serving", 60*time.Second, func(st api.JobStatus) bool {
		return st.Step > 0 && len(st.Pservers) == 2 && st.Pservers[0].Addr != "" && st.Pservers[1].Addr != ""
	})
	hc.assertOnOwnHosts(t, st)
	st = hc.waitFor(t, 1, "across", "the job to finish", 150*time.Second, succeeded)
	assertExact(t, st)
	sums := manifestSums(t, st.ModelDir)
	clusterReference.Lock()
	if clusterReference.sums == "" {
		clusterReference.sums = sums // an uninterrupted run: the reference of the other tests
	} else if sums != clusterReference.sums {
		t.Errorf("final model differs from the reference run:\n %s\n %s", sums, clusterReference.sums)
	}
	clusterReference.Unlock()
}

// assertOnOwnHosts: the roles are spread over all three hosts, and each
// pserver serves on the address of the host it runs on.
func (hc *hostCluster) assertOnOwnHosts(t *testing.T, st api.JobStatus) {
	t.Helper()
	used := map[string]bool{st.Master.Node: true}
	for _, tr := range st.Trainers {
		used[tr.Node] = true
	}
	for _, ps := range st.Pservers {
		used[ps.Node] = true
		host, _, err := net.SplitHostPort(ps.Addr)
		if err != nil || host != hc.host(t, ps.Node).IP {
			t.Errorf("%s runs on %s (%s) but publishes %s", ps.Name, ps.Node, hc.host(t, ps.Node).IP, ps.Addr)
		}
	}
	if len(used) != 3 {
		t.Errorf("the job's roles run on %d hosts, want all 3: master %s, pservers %+v, trainers %+v", len(used), st.Master.Node, st.Pservers, st.Trainers)
	}
}

func (hc *hostCluster) host(t *testing.T, node string) *netcluster.Host {
	t.Helper()
	i := slices.IndexFunc(hc.Hosts, func(h *netcluster.Host) bool { return h.Name == node })
	if i < 0 {
		t.Fatalf("node %q is none of the cluster's hosts", node)
	}
	return hc.Hosts[i]
}

// TestClusterEtcdMemberKilled: the etcd leader, one member of three, is
// SIGKILLed while a sync job runs across the hosts; the job SUCCEEDS with
// every record applied once and the uninterrupted run's model.
func TestClusterEtcdMemberKilled(t *testing.T) {
	hc := startHostCluster(t)
	ref := hc.referenceSums(t)
	hc.submit(t, 0, "etcd-kill")
	st := hc.waitFor(t, 0, "etcd-kill", "training to progress", 60*time.Second, func(st api.JobStatus) bool { return st.Step > 60 })
	leader := hc.etcdLeader(t)
	t.Logf("SIGKILL etcd member %s (the leader) at step %d", leader.Name, st.Step)
	leader.Kill()
	st = hc.waitFor(t, 0, "etcd-kill", "the job to finish", 150*time.Second, succeeded)
	logEvents(t, st)
	assertExact(t, st)
	assertSameModel(t, st, ref)
}

// etcdLeader is the member that leads the cluster's etcd now.
func (hc *hostCluster) etcdLeader(t *testing.T) *etcdproc.Member {
	t.Helper()
	cli, err := hc.EtcdClient(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	for _, m := range hc.Etcd {
		st, err := cli.Status(context.Background(), m.ClientURL())
		if err == nil && st.Leader == st.Header.MemberId {
			return m
		}
	}
	t.Fatal("no etcd member leads")
	return nil
}
