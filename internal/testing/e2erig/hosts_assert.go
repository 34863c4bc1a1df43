package e2erig

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gtrain/gtrain/api"
	"github.com/gtrain/gtrain/coord"
	"github.com/gtrain/gtrain/coord/schema"
	"github.com/gtrain/gtrain/internal/testing/netcluster"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// AssertOnOwnHosts: the roles are spread over all three hosts, and each
// pserver serves on the address of the host it runs on.
func (hc *HostCluster) AssertOnOwnHosts(t *testing.T, st api.JobStatus) {
	t.Helper()
	used := map[string]bool{st.Master.Node: true}
	for _, tr := range st.Trainers {
		used[tr.Node] = true
	}
	for _, ps := range st.Pservers {
		used[ps.Node] = true
		host, _, err := net.SplitHostPort(ps.Addr)
		if err != nil || host != hc.Host(t, ps.Node).IP {
			t.Errorf("%s runs on %s (%s) but publishes %s", ps.Name, ps.Node, hc.Host(t, ps.Node).IP, ps.Addr)
		}
	}
	if len(used) != 3 {
		t.Errorf("the job's roles run on %d hosts, want all 3: master %s, pservers %+v, trainers %+v", len(used), st.Master.Node, st.Pservers, st.Trainers)
	}
}

// AssertNothingRunsOn: neither `job workers` nor `job status` shows a
// process on node running.
func (hc *HostCluster) AssertNothingRunsOn(t *testing.T, job, node string) {
	t.Helper()
	var workers []api.WorkerRow
	JSONOf(t, hc.On(0), &workers, "job", "workers", job)
	for _, w := range workers {
		if w.Node == node && w.State == api.WorkerRunning {
			t.Errorf("job workers shows %s running on the down node %s", w.Name, node)
		}
	}
	var st api.JobStatus
	JSONOf(t, hc.On(0), &st, "job", "status", job)
	for _, ps := range st.Pservers {
		if ps.Node == node && ps.State == api.WorkerRunning {
			t.Errorf("job status shows %s running on the down node %s", ps.Name, node)
		}
	}
	for _, tr := range st.Trainers {
		if tr.Node == node && tr.State == api.WorkerRunning {
			t.Errorf("job status shows %s running on the down node %s", tr.Name, node)
		}
	}
}

// AssertPasswordNotExposed: the etcd password shows in no process's
// command line nor any role's environment; each role is given the agent's
// 0600 file holding it (--etcd-password-file).
func (hc *HostCluster) AssertPasswordNotExposed(t *testing.T) {
	t.Helper()
	roles := 0
	for _, pid := range netcluster.Processes(hc.Dir) {
		cmdline, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		if strings.Contains(string(cmdline), hc.EtcdPassword()) {
			t.Errorf("pid %d has the etcd password on its command line: %q", pid, cmdline)
		}
		if !bytes.Contains(cmdline, []byte("\x00--job\x00")) {
			continue
		}
		roles++
		if env, _ := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid)); strings.Contains(string(env), hc.EtcdPassword()) {
			t.Errorf("role pid %d has the etcd password in its environment", pid)
		}
		args := strings.Split(string(cmdline), "\x00")
		i := slices.Index(args, "--etcd-password-file")
		if i < 0 || i+1 >= len(args) {
			t.Errorf("role pid %d has no --etcd-password-file: %q", pid, cmdline)
			continue
		}
		fi, err := os.Stat(args[i+1])
		b, _ := os.ReadFile(args[i+1])
		if err != nil || fi.Mode().Perm() != 0o600 || string(b) != hc.EtcdPassword() {
			t.Errorf("role pid %d's password file %s: %v, %v; want mode 0600 holding the password", pid, args[i+1], fi, err)
		}
	}
	if roles != 6 {
		t.Errorf("found %d role processes of the job, want 6 (master, 2 pservers, 3 trainers)", roles)
	}
}

// NodeRecord is the live record of node and the lease it is held under.
func NodeRecord(t *testing.T, cli *clientv3.Client, node string) (schema.NodeRecord, clientv3.LeaseID) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	var rec schema.NodeRecord
	if _, err := coord.GetJSON(ctx, cli, coord.NodeKey(node), &rec); err != nil {
		t.Fatalf("node record of %s: %v", node, err)
	}
	resp, err := cli.Get(ctx, coord.NodeKey(node))
	if err != nil || len(resp.Kvs) != 1 {
		t.Fatalf("node key of %s: %v %v", node, resp, err)
	}
	return rec, clientv3.LeaseID(resp.Kvs[0].Lease)
}

// AssertHolderKept checks, until until fires (failing after limit, unless
// 0), that h1's node record stays under lease and that its agent runs and
// lists itself ready.
func (hc *HostCluster) AssertHolderKept(t *testing.T, cli *clientv3.Client, holder *netcluster.Agent, lease clientv3.LeaseID, until <-chan struct{}, limit time.Duration) {
	t.Helper()
	var timeout <-chan time.Time
	if limit > 0 {
		timeout = time.After(limit)
	}
	for {
		if _, got := NodeRecord(t, cli, "h1"); got != lease {
			t.Fatalf("h1's node record moved from lease %x to %x: the holder's lease was revoked", lease, got)
		}
		var nodes []api.NodeRow
		out, errs, code, err := hc.Gctl(holder.API, "node", "list", "-o", "json")
		if err != nil || code != 0 || JSONUnmarshal(out, &nodes) != nil ||
			!slices.ContainsFunc(nodes, func(n api.NodeRow) bool { return n.Name == "h1" && n.State == api.NodeReady }) {
			t.Fatalf("h1 not ready through its own agent: exit %d %v %s %s", code, err, out, errs)
		}
		select {
		case <-holder.Exited():
			t.Fatal("the first agent exited")
		case <-until:
			return
		case <-timeout:
			t.Fatalf("the second agent still runs after %s", limit)
		case <-time.After(500 * time.Millisecond):
		}
	}
}
