package daemon

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/concurrency"

	"github.com/gtrain/gtrain/coord"
	"github.com/gtrain/gtrain/coord/schema"
	"github.com/gtrain/gtrain/internal/retry"
)

// nameWaitPolicy paces the claims of a node name held by another agent.
var nameWaitPolicy = retry.Policy{Initial: time.Second}

// claimWaiting claims the node name, and while another agent holds it,
// tries again every second for as long as that agent's lease lasts (its
// TTL, plus a second). A holder on another host cannot be judged by its PID
// (see revokeDeadAgent), so a dead one frees the name only when its lease
// expires; a holder still there after a whole TTL renews its lease, so it is
// alive, and the claim fails with ErrNodeNameTaken.
func claimWaiting(ctx context.Context, cli *clientv3.Client, rec schema.NodeRecord, ttl int, log *slog.Logger) (*concurrency.Session, error) {
	var sess *concurrency.Session
	var wait time.Duration
	var holder string
	start := time.Now()
	err := retry.Do(ctx, nameWaitPolicy, func() error {
		var err error
		sess, err = claimNode(ctx, cli, rec, ttl)
		if !errors.Is(err, ErrNodeNameTaken) {
			return retry.Permanent(err)
		}
		if wait == 0 {
			var h schema.NodeRecord
			h, wait = nameHolder(ctx, cli, rec.Name, ttl)
			wait += time.Second
			holder = describeAgent(h)
		}
		if time.Since(start) >= wait {
			return retry.Permanent(err)
		}
		return err
	}, retry.OnRetry(func(int, error, time.Duration) {
		log.Warn("node name held by another agent; waiting for its lease to expire before refusing",
			"holder", holder, "waited", time.Since(start).Round(time.Second).String(), "up_to", wait.String())
	}))
	return sess, err
}

// nameHolder is the agent holding the node name and the TTL its lease was
// granted (fall back: ttl seconds, this agent's own).
func nameHolder(ctx context.Context, cli *clientv3.Client, name string, ttl int) (schema.NodeRecord, time.Duration) {
	var h schema.NodeRecord
	granted := time.Duration(ttl) * time.Second
	resp, err := cli.Get(ctx, coord.NodeKey(name))
	if err != nil || len(resp.Kvs) == 0 {
		return h, granted
	}
	_ = json.Unmarshal(resp.Kvs[0].Value, &h)
	if resp.Kvs[0].Lease == 0 {
		return h, granted
	}
	lease, err := cli.TimeToLive(ctx, clientv3.LeaseID(resp.Kvs[0].Lease))
	if err == nil && lease.GrantedTTL > 0 {
		granted = time.Duration(lease.GrantedTTL) * time.Second
	}
	return h, granted
}

// describeAgent says where an agent runs: "pid 123 on host H, api A".
func describeAgent(h schema.NodeRecord) string {
	host := h.Host
	if host == "" {
		host = "unknown" // written by an agent older than HostID
	}
	return fmt.Sprintf("pid %d on host %s, api %s", h.PID, host, h.APIAddr)
}

// nameTaken is the refusal of a node name held by another agent: it names
// the holder and what the operator can do.
func nameTaken(ctx context.Context, cli *clientv3.Client, name string, claimErr error) error {
	var h schema.NodeRecord
	if _, err := coord.GetJSON(ctx, cli, coord.NodeKey(name), &h); err != nil {
		return fmt.Errorf("%w: node name %q is held by another agent (%v); give this agent another --node-name, or stop that one",
			ErrNodeNameTaken, name, claimErr)
	}
	return fmt.Errorf("%w: node name %q is held by a live agent (%s); give this agent another --node-name, or stop that one",
		ErrNodeNameTaken, name, describeAgent(h))
}
