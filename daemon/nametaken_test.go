package daemon

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/gtrain/gtrain/coord"
	"github.com/gtrain/gtrain/coord/schema"
)

// otherHost is the HostID of another machine: a PID of it is dead here.
const otherHost = "00000000-0000-0000-0000-000000000000/pidns:1"

// deadPID is a PID no process of this host has (beyond pid_max).
const deadPID = 1 << 30

// holdName writes a NodeRecord for name under a lease of ttl seconds that
// the test keeps alive when keep is set (a live agent), and returns the lease.
func holdName(t *testing.T, cli *clientv3.Client, name string, rec schema.NodeRecord, ttl int64, keep bool) clientv3.LeaseID {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	lease, err := cli.Grant(ctx, ttl)
	if err != nil {
		t.Fatal(err)
	}
	if keep {
		if _, err := cli.KeepAlive(ctx, lease.ID); err != nil {
			t.Fatal(err)
		}
	}
	if err := coord.PutJSON(ctx, cli, coord.NodeKey(name), rec, clientv3.WithLease(lease.ID)); err != nil {
		t.Fatal(err)
	}
	return lease.ID
}

func nodeLease(t *testing.T, cli *clientv3.Client, name string) clientv3.LeaseID {
	t.Helper()
	resp, err := cli.Get(context.Background(), coord.NodeKey(name))
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Kvs) == 0 {
		return 0
	}
	return clientv3.LeaseID(resp.Kvs[0].Lease)
}

// The same --node-name on another host: the holder's PID is dead here, but
// it is not revoked; the live holder keeps its lease, and the second agent
// is refused after waiting one TTL, with an error naming the holder.
func TestNameHeldOnAnotherHostIsRefusedNotRevoked(t *testing.T) {
	t.Parallel()
	cli := etcdClient(t, startEtcd(t))
	holder := schema.NodeRecord{Name: "twin", PID: deadPID, Host: otherHost, APIAddr: "10.0.0.1:7164"}
	lease := holdName(t, cli, "twin", holder, 2, true)
	start := time.Now()
	_, err := register(context.Background(), cli, schema.NodeRecord{Name: "twin", PID: 1, Host: coord.HostID()}, 2, testLog(t))
	waited := time.Since(start)
	want := fmt.Sprintf(`node name "twin" is held by a live agent (pid %d on host %s, api 10.0.0.1:7164); give this agent another --node-name, or stop that one`, deadPID, otherHost)
	if !errors.Is(err, ErrNodeNameTaken) || !strings.Contains(err.Error(), want) {
		t.Errorf("register = %v, want ErrNodeNameTaken with %q", err, want)
	}
	if waited < 2*time.Second {
		t.Errorf("refused after %s, want after the holder's TTL (2s) at least", waited)
	}
	if got := nodeLease(t, cli, "twin"); got != lease {
		t.Errorf("node record under lease %x after the refusal, want the holder's %x", got, lease)
	}
}

// A holder on another host that died: its lease expires by itself within
// its TTL, and the agent that waited for it gets the name.
func TestNameOfDeadAgentOnAnotherHostFreedByTTL(t *testing.T) {
	t.Parallel()
	cli := etcdClient(t, startEtcd(t))
	holdName(t, cli, "moved", schema.NodeRecord{Name: "moved", PID: deadPID, Host: otherHost}, 2, false)
	r, err := register(context.Background(), cli, schema.NodeRecord{Name: "moved", PID: 1, Host: coord.HostID()}, 2, testLog(t))
	if err != nil {
		t.Fatalf("register after the holder's lease expired: %v", err)
	}
	defer r.close()
	var rec schema.NodeRecord
	if _, err := coord.GetJSON(context.Background(), cli, coord.NodeKey("moved"), &rec); err != nil || rec.Host != coord.HostID() {
		t.Errorf("node record = %+v (%v), want ours", rec, err)
	}
}

// A dead agent of this very host (same HostID) is revoked at once: no wait.
func TestNameOfDeadAgentOnThisHostRevoked(t *testing.T) {
	t.Parallel()
	cli := etcdClient(t, startEtcd(t))
	holdName(t, cli, "again", schema.NodeRecord{Name: "again", PID: deadPID, Host: coord.HostID()}, 60, true)
	start := time.Now()
	r, err := register(context.Background(), cli, schema.NodeRecord{Name: "again", PID: 1, Host: coord.HostID()}, 2, testLog(t))
	if err != nil {
		t.Fatalf("register over a dead agent of this host: %v", err)
	}
	defer r.close()
	if waited := time.Since(start); waited > time.Second {
		t.Errorf("took %s, want the dead holder revoked at once", waited)
	}
}
