package e2erig

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/gtrain/gtrain/internal/testing/etcdproc"
	"github.com/gtrain/gtrain/internal/testing/wait"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// EtcdFollower is a member that does not lead the cluster's etcd now.
func (hc *HostCluster) EtcdFollower(t *testing.T) *etcdproc.Member {
	t.Helper()
	leader := hc.EtcdLeader(t)
	for _, m := range hc.Etcd {
		if m != leader {
			return m
		}
	}
	return nil
}

// EtcdLeader is the member that leads the cluster's etcd now.
func (hc *HostCluster) EtcdLeader(t *testing.T) *etcdproc.Member {
	t.Helper()
	cli := hc.EtcdTestClient(t)
	for _, m := range hc.Etcd {
		st, err := cli.Status(context.Background(), m.ClientURL())
		if err == nil && st.Leader == st.Header.MemberId {
			return m
		}
	}
	t.Fatal("no etcd member leads")
	return nil
}

// EtcdTestClient is a client of the cluster's etcd, closed when the test
// ends.
func (hc *HostCluster) EtcdTestClient(t *testing.T) *clientv3.Client {
	t.Helper()
	cli, err := hc.EtcdClient(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cli.Close() })
	return cli
}

// WaitEtcdCaughtUp waits until m follows the leader and has applied what
// the leader had committed when the wait began: killing the leader before
// a restarted member caught up would take the cluster's quorum with it,
// which is a different test.
func (hc *HostCluster) WaitEtcdCaughtUp(t *testing.T, m *etcdproc.Member) {
	t.Helper()
	cli := hc.EtcdTestClient(t)
	leader := hc.EtcdLeader(t)
	lst, err := cli.Status(context.Background(), leader.ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	wait.Eventually(t, 30*time.Second, fmt.Sprintf("etcd member %s to catch up with the leader (index %d)", m.Name, lst.RaftIndex), func() (bool, string) {
		st, err := cli.Status(context.Background(), m.ClientURL())
		return err == nil && st.Leader == lst.Leader && st.RaftAppliedIndex >= lst.RaftIndex, fmt.Sprintf("%+v, %v", st, err)
	})
}

// KillEtcdLeader SIGKILLs the leading member and returns how long the
// survivors went without a leader.
func (hc *HostCluster) KillEtcdLeader(t *testing.T) (leader *etcdproc.Member, leaderless time.Duration) {
	t.Helper()
	cli := hc.EtcdTestClient(t)
	leader = hc.EtcdLeader(t)
	lst, err := cli.Status(context.Background(), leader.ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	killed := time.Now()
	leader.Kill()
	for time.Since(killed) < 60*time.Second {
		for _, m := range hc.Etcd {
			if m == leader {
				continue
			}
			ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
			st, err := cli.Status(ctx, m.ClientURL())
			cancel()
			if err == nil && st.Leader != 0 && st.Leader != lst.Header.MemberId {
				return leader, time.Since(killed)
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatal("no etcd member led within 60 s of the leader's kill")
	return leader, 0
}

// PauseEtcd SIGSTOPs every etcd member for d, then SIGCONTs them all.
func (hc *HostCluster) PauseEtcd(t *testing.T, d time.Duration, step int64) {
	t.Helper()
	t.Logf("SIGSTOP every etcd member for %s at step %d", d, step)
	for _, m := range hc.Etcd {
		if err := m.Pause(); err != nil {
			t.Fatal(err)
		}
	}
	resume := func() {
		for _, m := range hc.Etcd {
			_ = m.Resume()
		}
	}
	defer resume()
	time.Sleep(d)
	resume()
}
