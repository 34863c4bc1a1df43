package e2e

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gtrain/gtrain/api"
	"github.com/gtrain/gtrain/internal/testing/netcluster"
)

// TestClusterSyncJobAcrossHosts: three hosts (network namespaces with
// addresses of their own on a bridge), a 3-member etcd over TLS with a user
// and password, an agent on each. The nodes publish their hosts' addresses,
// a sync job's roles spread over the hosts and serve on their own host's
// address, they get the etcd password in their environment and on no
// command line, and the job SUCCEEDS with every record applied exactly once.
func TestClusterSyncJobAcrossHosts(t *testing.T) {
	hc := startHostCluster(t, netcluster.EtcdPassword)
	var nodes []api.NodeRow
	jsonOf(t, hc.on(1), &nodes, "node", "list")
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
	st := waitJob(t, hc.on(1), "across", "all pservers serving", 60*time.Second, func(st api.JobStatus) bool {
		return st.Step > 0 && len(st.Pservers) == 2 && st.Pservers[0].Addr != "" && st.Pservers[1].Addr != ""
	})
	hc.assertOnOwnHosts(t, st)
	hc.assertPasswordOnNoCommandLine(t)
	st = waitJob(t, hc.on(1), "across", "the job to finish", 150*time.Second, succeeded)
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

// TestClusterEtcdMemberKilled: the agents and their roles use an external
// etcd over TLS, as the user their client certificate names. While a sync
// job runs across the hosts, one member of three is SIGKILLed: a follower,
// which is then restarted, and later the leader. The job SUCCEEDS with
// every record applied once and the uninterrupted run's model, and its
// master went on without a restart.
func TestClusterEtcdMemberKilled(t *testing.T) {
	hc := startHostCluster(t, netcluster.EtcdCertUser)
	ref := hc.referenceSums(t)
	hc.submit(t, 0, "etcd-kill")
	st := waitJob(t, hc.on(0), "etcd-kill", "training to progress", 60*time.Second, func(st api.JobStatus) bool { return st.Step > 60 })
	follower := hc.etcdFollower(t)
	t.Logf("SIGKILL etcd member %s (a follower) at step %d", follower.Name, st.Step)
	follower.Kill()
	st = waitJob(t, hc.on(0), "etcd-kill", "progress without the follower", 60*time.Second, progressedFrom(st.Step+100))
	if err := follower.Restart(); err != nil {
		t.Fatal(err)
	}
	hc.waitEtcdCaughtUp(t, follower)
	leader, leaderless := hc.killEtcdLeader(t)
	t.Logf("restarted %s; SIGKILLed etcd member %s (the leader) at step %d; %s without a leader", follower.Name, leader.Name, st.Step, leaderless.Round(time.Millisecond))
	st = waitJob(t, hc.on(0), "etcd-kill", "the job to finish", 150*time.Second, succeeded)
	logEvents(t, st)
	assertExact(t, st)
	assertSameModel(t, st, ref)
	// A role whose own etcd write was cut by the kill may restart (and the
	// job recover from a checkpoint); the master's fenced commits are resent,
	// so it keeps leading unless etcd had no leader for so long that its
	// client gave up the lease's keep-alive, which a loaded machine can
	// cause: the client gives up 5 s (the TTL) after its last answer, which
	// came up to 5/3 s before the kill.
	if st.Master.Restarts != 0 && leaderless < masterKeepAliveSlack {
		t.Errorf("the master restarted %d times while one etcd member of three was down (%s without an etcd leader)", st.Master.Restarts, leaderless)
	}
	for _, w := range append(trainersOf(st), pserversOf(st)...) {
		if w.restarts != 0 {
			t.Logf("%s restarted %d times (its etcd write was cut by the kill)", w.name, w.restarts)
		}
	}
}

// masterKeepAliveSlack is how long etcd may go without a leader before the
// master's etcd client may give up its lease (2/3 of the 5 s session TTL).
const masterKeepAliveSlack = 3 * time.Second

// progressedFrom holds once the job reached step (or ended well).
func progressedFrom(step int64) func(api.JobStatus) bool {
	return func(st api.JobStatus) bool { return st.Step >= step || st.State == api.StateSucceeded }
}

// TestClusterHostCrash: a host that runs a pserver crashes (its agent and
// every role on it SIGKILLed, never restarted). Its node shows down within
// 5 s and stays listed; no worker on it shows running; its roles are placed
// on the live hosts, and the job SUCCEEDS with every record applied once
// and the uninterrupted run's model, bit for bit.
func TestClusterHostCrash(t *testing.T) {
	hc := startHostCluster(t, netcluster.EtcdPlain)
	ref := hc.referenceSums(t)
	hc.submit(t, 0, "host-crash")
	st := waitJob(t, hc.on(0), "host-crash", "training to progress", 60*time.Second, func(st api.JobStatus) bool { return st.Step > 60 })
	victim := hc.pserverHostBesides(t, st, hc.Hosts[0].Name)
	at := time.Now()
	pids := victim.Agent.Crash()
	t.Logf("host %s crashed at step %d: SIGKILLed %v", victim.Name, st.Step, pids)
	hc.waitNodeDown(t, victim.Name, at, 5*time.Second)
	if left := netcluster.Processes(victim.Agent.DataDir); len(left) > 0 {
		t.Errorf("processes of the crashed host live on: %v", left)
	}
	hc.assertNothingRunsOn(t, "host-crash", victim.Name)

	st = waitJob(t, hc.on(0), "host-crash", "the job to finish after the crash", 150*time.Second, succeeded)
	logEvents(t, st)
	assertExact(t, st)
	assertSameModel(t, st, ref)
	hc.assertNothingRunsOn(t, "host-crash", victim.Name)
	var nodes []api.NodeRow
	jsonOf(t, hc.on(0), &nodes, "node", "list")
	if i := slices.IndexFunc(nodes, func(n api.NodeRow) bool { return n.Name == victim.Name }); i < 0 || nodes[i].State != api.NodeDown {
		t.Errorf("after the job: node list %+v, want %s listed down", nodes, victim.Name)
	}
}

// pserverHostBesides is a host other than spare that runs a pserver.
func (hc *hostCluster) pserverHostBesides(t *testing.T, st api.JobStatus, spare string) *netcluster.Host {
	t.Helper()
	for _, ps := range st.Pservers {
		if ps.Node != spare {
			return hc.host(t, ps.Node)
		}
	}
	t.Fatalf("every pserver runs on %s: %+v", spare, st.Pservers)
	return nil
}

// waitNodeDown requires node to show down in `gctl node list` within limit
// of since.
func (hc *hostCluster) waitNodeDown(t *testing.T, node string, since time.Time, limit time.Duration) {
	t.Helper()
	for {
		var nodes []api.NodeRow
		jsonOf(t, hc.on(0), &nodes, "node", "list")
		i := slices.IndexFunc(nodes, func(n api.NodeRow) bool { return n.Name == node })
		if i >= 0 && nodes[i].State == api.NodeDown {
			t.Logf("node %s down %s after the crash", node, time.Since(since).Round(10*time.Millisecond))
			return
		}
		if time.Since(since) > limit {
			t.Fatalf("node %s not down %s after the crash: %+v (it must stay listed, as down)", node, limit, nodes)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// assertNothingRunsOn: neither `job workers` nor `job status` shows a
// process on node running.
func (hc *hostCluster) assertNothingRunsOn(t *testing.T, job, node string) {
	t.Helper()
	var workers []api.WorkerRow
	jsonOf(t, hc.on(0), &workers, "job", "workers", job)
	for _, w := range workers {
		if w.Node == node && w.State == api.WorkerRunning {
			t.Errorf("job workers shows %s running on the down node %s", w.Name, node)
		}
	}
	var st api.JobStatus
	jsonOf(t, hc.on(0), &st, "job", "status", job)
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

// assertPasswordOnNoCommandLine: the etcd password reaches the roles in
// their environment, and shows in no process's command line.
func (hc *hostCluster) assertPasswordOnNoCommandLine(t *testing.T) {
	t.Helper()
	roles := 0
	for _, pid := range netcluster.Processes(hc.Dir) {
		cmdline, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		if strings.Contains(string(cmdline), hc.EtcdPassword()) {
			t.Errorf("pid %d has the etcd password on its command line: %q", pid, cmdline)
		}
		if bytes.Contains(cmdline, []byte("\x00--job\x00")) {
			roles++
			env, _ := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
			if !strings.Contains(string(env), "GTRAIN_ETCD_PASSWORD="+hc.EtcdPassword()) {
				t.Errorf("role pid %d has no etcd password in its environment", pid)
			}
		}
	}
	if roles != 6 {
		t.Errorf("found %d role processes of the job, want 6 (master, 2 pservers, 3 trainers)", roles)
	}
}
