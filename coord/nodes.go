package coord

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/gtrain/gtrain/api"
	"github.com/gtrain/gtrain/coord/schema"
)

// ClusterNode is a node that ever registered, as ReadNodes found it.
type ClusterNode struct {
	Name     string
	Record   schema.NodeRecord // the live record when there is one, else the durable one
	Live     bool              // its leased record exists: the agent is alive as far as etcd knows
	Draining bool
	DrainRev int64 // create revision of its drain mark, when draining
}

// State is how the node shows and how placement treats it: down when etcd
// lost its lease or gossip declared it dead, draining when the operator
// drains it, ready otherwise.
func (n ClusterNode) State(gossipDown func(string) bool) api.NodeState {
	switch {
	case !n.Live || gossipDown(n.Name):
		return api.NodeDown
	case n.Draining:
		return api.NodeDraining
	}
	return api.NodeReady
}

// ReadNodes reads every node that ever registered, with its liveness and
// drain mark, at revision rev (0: now). It returns the revision read, for
// reads that must see the same moment.
func ReadNodes(ctx context.Context, cli clientv3.KV, rev int64) ([]ClusterNode, int64, error) {
	get := func(prefix string) (*clientv3.GetResponse, error) {
		opts := []clientv3.OpOption{clientv3.WithPrefix()}
		if rev > 0 {
			opts = append(opts, clientv3.WithRev(rev))
		}
		resp, err := cli.Get(ctx, prefix, opts...)
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", prefix, err)
		}
		rev = resp.Header.Revision
		return resp, nil
	}
	info, err := get(NodeInfoPrefix())
	if err != nil {
		return nil, 0, err
	}
	live, err := get(NodePrefix())
	if err != nil {
		return nil, 0, err
	}
	drains, err := get(DrainPrefix())
	if err != nil {
		return nil, 0, err
	}
	byName := map[string]*ClusterNode{}
	add := func(kvs []*mvccpb.KeyValue, isLive bool) error {
		for _, kv := range kvs {
			var rec schema.NodeRecord
			if err := json.Unmarshal(kv.Value, &rec); err != nil {
				return fmt.Errorf("decode %s: %w", kv.Key, err)
			}
			n := byName[rec.Name]
			if n == nil {
				n = &ClusterNode{Name: rec.Name}
				byName[rec.Name] = n
			}
			n.Live = n.Live || isLive
			n.Record = rec // the live record, read last, is the newest
		}
		return nil
	}
	if err := add(info.Kvs, false); err != nil {
		return nil, 0, err
	}
	if err := add(live.Kvs, true); err != nil {
		return nil, 0, err
	}
	for _, kv := range drains.Kvs {
		if name, ok := ParseDrainKey(string(kv.Key)); ok && byName[name] != nil {
			byName[name].Draining = true
			byName[name].DrainRev = kv.CreateRevision
		}
	}
	nodes := make([]ClusterNode, 0, len(byName))
	for _, n := range byName {
		nodes = append(nodes, *n)
	}
	slices.SortFunc(nodes, func(a, b ClusterNode) int { return strings.Compare(a.Name, b.Name) })
	return nodes, rev, nil
}
