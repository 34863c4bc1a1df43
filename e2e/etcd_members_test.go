package e2e

import (
	"fmt"

	"context"
	"github.com/gtrain/gtrain/internal/testing/wait"
	"testing"
	"time"

	"github.com/gtrain/gtrain/internal/testing/etcdproc"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// etcdFollower is a member that does not lead the cluster's etcd now.
func (hc *hostCluster) etcdFollower(t *testing.T) *etcdproc.Member {
	t.Helper()
	leader := hc.etcdLeader(t)
	for _, m := range hc.Etcd {
		if m != leader {
			return m
		}
	}
	return nil
}

// etcdLeader is the member that leads the cluster's etcd now.
func (hc *hostCluster) etcdLeader(t *testing.T) *etcdproc.Member {
	t.Helper()
	cli := hc.etcdClient(t)
	for _, m := range hc.Etcd {
		st, err := cli.Status(context.Background(), m.ClientURL())
		if err == nil && st.Leader == st.Header.MemberId {
			return m
		}
	}
	t.Fatal("no etcd member leads")
	return nil
}

func (hc *hostCluster) etcdClient(t *testing.T) *clientv3.Client {
	t.Helper()
	cli, err := hc.EtcdClient(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cli.Close() })
	return cli
}

// waitEtcdCaughtUp waits until m follows the leader and has applied what
// the leader had committed when the wait began: killing the leader before
// a restarted member caught up would take the cluster's quorum with it,
// which is a different test.
func (hc *hostCluster) waitEtcdCaughtUp(t *testing.T, m *etcdproc.Member) {
	t.Helper()
	cli := hc.etcdClient(t)
	leader := hc.etcdLeader(t)
	lst, err := cli.Status(context.Background(), leader.ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	wait.Eventually(t, 30*time.Second, fmt.Sprintf("etcd member %s to catch up with the leader (index %d)", m.Name, lst.RaftIndex), func() (bool, string) {
		st, err := cli.Status(context.Background(), m.ClientURL())
		return err == nil && st.Leader == lst.Leader && st.RaftAppliedIndex >= lst.RaftIndex, fmt.Sprintf("%+v, %v", st, err)
	})
}

// killEtcdLeader SIGKILLs the leading member and returns how long the
// survivors went without a leader.
func (hc *hostCluster) killEtcdLeader(t *testing.T) (leader *etcdproc.Member, leaderless time.Duration) {
	t.Helper()
	cli := hc.etcdClient(t)
	leader = hc.etcdLeader(t)
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
