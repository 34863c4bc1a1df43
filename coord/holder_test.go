package coord

import (
	"context"
	"os"
	"os/exec"
	"testing"

	"github.com/gtrain/gtrain/coord/schema"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// foreignHost is the HostID of another machine: no PID of it means
// anything here.
const foreignHost = "00000000-0000-0000-0000-000000000000/pidns:1"

func TestRevokeIfDead(t *testing.T) {
	const deadPID, livePID = 4242, 4343
	alive := func(pid int) bool { return pid == livePID }
	local := HostID()
	if local == "" {
		t.Fatal("HostID() is empty on Linux with /proc")
	}
	cases := []struct {
		name        string
		holder      Holder
		askNode     string
		wantRevoked bool
	}{
		{"dead holder on this node", Holder{"n1", deadPID, local}, "n1", true},
		{"live holder on this node", Holder{"n1", livePID, local}, "n1", false},
		{"dead holder on another node", Holder{"n2", deadPID, local}, "n1", false},
		{"holder without pid", Holder{"n1", 0, local}, "n1", false},
		// The duplicate node name: the same name on another host, whose PID
		// is dead here only because it lives there.
		{"dead pid on another host", Holder{"n1", deadPID, foreignHost}, "n1", false},
		{"dead pid on another host, any node", Holder{"n1", deadPID, foreignHost}, "", false},
		{"dead pid on an unknown host (old record)", Holder{"n1", deadPID, ""}, "n1", false},
		{"dead pid on this host, any node", Holder{"n1", deadPID, local}, "", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cli := dialTest(t)
			ctx := t.Context()
			lease, err := cli.Grant(ctx, 30)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { cli.Revoke(context.Background(), lease.ID) })
			key := MasterHolderKey(uniqueJob(t))
			if err := PutJSON(ctx, cli, key, c.holder, clientv3.WithLease(lease.ID)); err != nil {
				t.Fatal(err)
			}
			if got := RevokeIfDead(ctx, cli, key, c.askNode, alive); got != c.wantRevoked {
				t.Errorf("RevokeIfDead = %v, want %v", got, c.wantRevoked)
			}
			ttl, err := cli.TimeToLive(ctx, lease.ID)
			if err != nil {
				t.Fatal(err)
			}
			if revoked := ttl.TTL == -1; revoked != c.wantRevoked {
				t.Errorf("lease revoked = %v (TTL %d), want %v", revoked, ttl.TTL, c.wantRevoked)
			}
			if keyAbsent(t, cli, key) != c.wantRevoked {
				t.Errorf("holder key absent = %v, want %v", !c.wantRevoked, c.wantRevoked)
			}
		})
	}
}

// A schema.NodeRecord is a holder too: its host field is read by RevokeIfDead.
func TestRevokeIfDeadReadsNodeRecords(t *testing.T) {
	cli := dialTest(t)
	ctx := t.Context()
	dead := func(int) bool { return false }
	for _, c := range []struct {
		host string
		want bool
	}{{foreignHost, false}, {HostID(), true}} {
		lease, err := cli.Grant(ctx, 30)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cli.Revoke(context.Background(), lease.ID) })
		key := NodeKey(uniqueJob(t))
		rec := schema.NodeRecord{Name: "n1", PID: 4242, Host: c.host}
		if err := PutJSON(ctx, cli, key, rec, clientv3.WithLease(lease.ID)); err != nil {
			t.Fatal(err)
		}
		if got := RevokeIfDead(ctx, cli, key, "", dead); got != c.want || keyAbsent(t, cli, key) != c.want {
			t.Errorf("node record on host %q: revoked %v, want %v", c.host, got, c.want)
		}
	}
}

func TestRevokeIfDeadWithoutHolder(t *testing.T) {
	cli := dialTest(t)
	called := false
	alive := func(int) bool { called = true; return false }
	if RevokeIfDead(t.Context(), cli, MasterHolderKey(uniqueJob(t)), "n1", alive) {
		t.Error("RevokeIfDead revoked something with no holder recorded")
	}
	if called {
		t.Error("RevokeIfDead asked about a pid with no holder recorded")
	}
}

func TestProcessAlive(t *testing.T) {
	if !ProcessAlive(os.Getpid()) {
		t.Error("ProcessAlive(own pid) = false")
	}
	for _, pid := range []int{0, -1} {
		if ProcessAlive(pid) {
			t.Errorf("ProcessAlive(%d) = true", pid)
		}
	}
	cmd := exec.Command("true")
	if err := cmd.Start(); err != nil {
		t.Fatalf("start true: %v", err)
	}
	pid := cmd.Process.Pid
	if err := cmd.Wait(); err != nil {
		t.Fatalf("wait true: %v", err)
	}
	if ProcessAlive(pid) {
		t.Errorf("ProcessAlive(%d) = true for a reaped child", pid)
	}
}

func TestSelfHolder(t *testing.T) {
	h := SelfHolder("n1")
	if h.Node != "n1" || h.PID != os.Getpid() || !IsLocalHost(h.Host) {
		t.Errorf("SelfHolder = %+v, want n1, pid %d, this host", h, os.Getpid())
	}
}
