package e2e

import (
	"net"
	"slices"
	"testing"
	"time"

	"github.com/gtrain/gtrain/api"
	"github.com/gtrain/gtrain/internal/testing/e2erig"
	"github.com/gtrain/gtrain/internal/testing/netcluster"
)

// TestClusterSyncJobAcrossHosts: three hosts (network namespaces with
// addresses of their own on a bridge), a 3-member etcd over TLS with a user
// and password, an agent on each. The nodes publish their hosts' addresses,
// a sync job's roles spread over the hosts and serve on their own host's
// address, they get the etcd password in a 0600 file, in no environment
// and on no command line, and the job SUCCEEDS with every record applied exactly once.
func TestClusterSyncJobAcrossHosts(t *testing.T) {
	hc := e2erig.StartHostCluster(t, netcluster.EtcdPassword)
	var nodes []api.NodeRow
	e2erig.JSONOf(t, hc.On(1), &nodes, "node", "list")
	if len(nodes) != 3 {
		t.Fatalf("node list: %+v, want 3 nodes", nodes)
	}
	for _, n := range nodes {
		h := hc.Host(t, n.Name)
		if n.State != api.NodeReady || n.Addr != net.JoinHostPort(h.IP, netcluster.APIPort) {
			t.Errorf("node %s: state %s addr %s, want ready at %s:%s", n.Name, n.State, n.Addr, h.IP, netcluster.APIPort)
		}
	}

	hc.Submit(t, 1, "across")
	st := e2erig.WaitJob(t, hc.On(1), "across", "all pservers serving", 60*time.Second, func(st api.JobStatus) bool {
		return st.Step > 0 && len(st.Pservers) == 2 && st.Pservers[0].Addr != "" && st.Pservers[1].Addr != ""
	})
	hc.AssertOnOwnHosts(t, st)
	hc.AssertPasswordNotExposed(t)
	st = e2erig.WaitJob(t, hc.On(1), "across", "the job to finish", 150*time.Second, e2erig.Succeeded)
	e2erig.AssertExact(t, st)
	sums := e2erig.ManifestSums(t, st.ModelDir)
	e2erig.ClusterReference.Lock()
	if e2erig.ClusterReference.Sums == "" {
		e2erig.ClusterReference.Sums = sums // an uninterrupted run: the reference of the other tests
	} else if sums != e2erig.ClusterReference.Sums {
		t.Errorf("final model differs from the reference run:\n %s\n %s", sums, e2erig.ClusterReference.Sums)
	}
	e2erig.ClusterReference.Unlock()
}

// TestClusterEtcdMemberKilled: the agents and their roles use an external
// etcd over TLS, as the user their client certificate names. While a sync
// job runs across the hosts, one member of three is SIGKILLed: a follower,
// which is then restarted, and later the leader. The job SUCCEEDS with
// every record applied once and the uninterrupted run's model, and its
// master went on without a restart.
func TestClusterEtcdMemberKilled(t *testing.T) {
	hc := e2erig.StartHostCluster(t, netcluster.EtcdCertUser)
	ref := hc.ReferenceSums(t)
	hc.Submit(t, 0, "etcd-kill")
	st := e2erig.WaitJob(t, hc.On(0), "etcd-kill", "training to progress", 60*time.Second, func(st api.JobStatus) bool { return st.Step > 60 })
	follower := hc.EtcdFollower(t)
	t.Logf("SIGKILL etcd member %s (a follower) at step %d", follower.Name, st.Step)
	follower.Kill()
	st = e2erig.WaitJob(t, hc.On(0), "etcd-kill", "progress without the follower", 60*time.Second, e2erig.ProgressedFrom(st.Step+100))
	if err := follower.Restart(); err != nil {
		t.Fatal(err)
	}
	hc.WaitEtcdCaughtUp(t, follower)
	leader, leaderless := hc.KillEtcdLeader(t)
	t.Logf("restarted %s; SIGKILLed etcd member %s (the leader) at step %d; %s without a leader", follower.Name, leader.Name, st.Step, leaderless.Round(time.Millisecond))
	st = e2erig.WaitJob(t, hc.On(0), "etcd-kill", "the job to finish", 150*time.Second, e2erig.Succeeded)
	e2erig.LogEvents(t, st)
	e2erig.AssertExact(t, st)
	e2erig.AssertSameModel(t, st, ref)
	// A role whose own etcd write was cut by the kill may restart (and the
	// job recover from a checkpoint); the master's fenced commits are resent,
	// so it keeps leading unless etcd had no leader for so long that its
	// client gave up the lease's keep-alive, which a loaded machine can
	// cause: the client gives up 5 s (the TTL) after its last answer, which
	// came up to 5/3 s before the kill.
	if st.Master.Restarts != 0 && leaderless < masterKeepAliveSlack {
		t.Errorf("the master restarted %d times while one etcd member of three was down (%s without an etcd leader)", st.Master.Restarts, leaderless)
	}
	for _, w := range append(e2erig.TrainersOf(st), e2erig.PserversOf(st)...) {
		if w.Restarts != 0 {
			t.Logf("%s restarted %d times (its etcd write was cut by the kill)", w.Name, w.Restarts)
		}
	}
}

// masterKeepAliveSlack is how long etcd may go without a leader before the
// master's etcd client may give up its lease (2/3 of the 5 s session TTL).
const masterKeepAliveSlack = 3 * time.Second

// TestClusterHostCrash: a host that runs a pserver crashes (its agent and
// every role on it SIGKILLed, never restarted). Its node shows down within
// 5 s and stays listed; no worker on it shows running; its roles are placed
// on the live hosts, and the job SUCCEEDS with every record applied once
// and the uninterrupted run's model, bit for bit.
func TestClusterHostCrash(t *testing.T) {
	hc := e2erig.StartHostCluster(t, netcluster.EtcdPlain)
	ref := hc.ReferenceSums(t)
	hc.Submit(t, 0, "host-crash")
	st := e2erig.WaitJob(t, hc.On(0), "host-crash", "training to progress", 60*time.Second, func(st api.JobStatus) bool { return st.Step > 60 })
	victim := hc.PserverHostBesides(t, st, hc.Hosts[0].Name)
	at := time.Now()
	pids := victim.Agent.Crash()
	t.Logf("host %s crashed at step %d: SIGKILLed %v", victim.Name, st.Step, pids)
	hc.WaitNodeDown(t, victim.Name, at, 5*time.Second)
	if left := netcluster.Processes(victim.Agent.DataDir); len(left) > 0 {
		t.Errorf("processes of the crashed host live on: %v", left)
	}
	hc.AssertNothingRunsOn(t, "host-crash", victim.Name)

	st = e2erig.WaitJob(t, hc.On(0), "host-crash", "the job to finish after the crash", 150*time.Second, e2erig.Succeeded)
	e2erig.LogEvents(t, st)
	e2erig.AssertExact(t, st)
	e2erig.AssertSameModel(t, st, ref)
	hc.AssertNothingRunsOn(t, "host-crash", victim.Name)
	var nodes []api.NodeRow
	e2erig.JSONOf(t, hc.On(0), &nodes, "node", "list")
	if i := slices.IndexFunc(nodes, func(n api.NodeRow) bool { return n.Name == victim.Name }); i < 0 || nodes[i].State != api.NodeDown {
		t.Errorf("after the job: node list %+v, want %s listed down", nodes, victim.Name)
	}
}
