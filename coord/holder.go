package coord

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"syscall"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// Holder identifies the process behind a leadership or a claim. Records that
// RevokeIfDead inspects carry these fields (schema.NodeRecord and schema.PserverRecord do too).
type Holder struct {
	Node string `json:"node"`
	PID  int    `json:"pid"`
	// Host is the HostID of the process: its PID means something only
	// where HostID is the same. "" in records written before it existed.
	Host string `json:"host,omitempty"`
}

// SelfHolder is this process as the holder of something on node.
func SelfHolder(node string) Holder {
	return Holder{Node: node, PID: os.Getpid(), Host: HostID()}
}

// RevokeIfDead revokes the lease that holds key when the record there names
// a process of this host (same HostID) on node (any node when node is "",
// for keys that name the node themselves) and that process is gone: a
// crashed holder's lease otherwise lives on for a whole TTL, and its
// successor would wait that long. A holder of another host, or of an
// unknown one, is never revoked, since its PID says nothing here (a PID
// dead here may be a live agent there): its lease expires by itself if it
// is dead. It reports whether it revoked anything.
func RevokeIfDead(ctx context.Context, cli *clientv3.Client, key, node string, alive func(pid int) bool) bool {
	resp, err := cli.Get(ctx, key)
	if err != nil || len(resp.Kvs) == 0 || resp.Kvs[0].Lease == 0 {
		return false
	}
	var h Holder
	if json.Unmarshal(resp.Kvs[0].Value, &h) != nil || h.PID <= 0 || !IsLocalHost(h.Host) ||
		(node != "" && h.Node != node) || alive(h.PID) {
		return false
	}
	_, err = cli.Revoke(ctx, clientv3.LeaseID(resp.Kvs[0].Lease))
	return err == nil
}

// ProcessAlive reports whether a process with this PID exists in this
// process's PID namespace; only meaningful for a PID of IsLocalHost.
func ProcessAlive(pid int) bool {
	if pid <= 0 {
		return false
	}
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
