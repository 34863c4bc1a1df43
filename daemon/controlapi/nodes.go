package controlapi

import (
	"context"

	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/gtrain/gtrain/api"
	"github.com/gtrain/gtrain/coord"
	"github.com/gtrain/gtrain/coord/schema"
)

// nodeDown reads which nodes are alive and says whether a node is down:
// its lease ended (or it never registered), or gossip declared it dead.
func (c *Server) nodeDown(ctx context.Context) (func(string) bool, error) {
	live, err := coord.ListJSON[schema.NodeRecord](ctx, c.cli, coord.NodePrefix())
	if err != nil {
		return nil, etcdUnavailable("list nodes", err)
	}
	alive := map[string]bool{}
	for _, n := range live {
		alive[n.Name] = true
	}
	return func(node string) bool { return !alive[node] || c.peers.IsDown(node) }, nil
}

func (c *Server) ListNodes(ctx context.Context, _ *api.ListNodesRequest) (*api.Document, error) {
	rows, err := c.nodeRows(ctx)
	if err != nil {
		return nil, err
	}
	return document(rows)
}

func (c *Server) nodeRows(ctx context.Context) ([]api.NodeRow, error) {
	nodes, _, err := coord.ReadNodes(ctx, c.cli, 0)
	if err != nil {
		return nil, etcdUnavailable("list nodes", err)
	}
	jobs, err := c.readJobs(ctx)
	if err != nil {
		return nil, err
	}
	return nodeRows(nodes, jobs, c.peers.IsDown), nil
}

// nodeRow is the row of node; NotFound when no agent ever registered it.
func (c *Server) nodeRow(ctx context.Context, node string) (*api.Document, error) {
	rows, err := c.nodeRows(ctx)
	if err != nil {
		return nil, err
	}
	for _, r := range rows {
		if r.Name == node {
			return document(r)
		}
	}
	return nil, status.Errorf(codes.NotFound, "node %s not found; see gctl node list", node)
}

// DrainNode marks the node draining: the scheduler moves its workers to
// other nodes and places nothing new there. Draining a draining node
// changes nothing.
func (c *Server) DrainNode(ctx context.Context, req *api.NodeRequest) (*api.Document, error) {
	node := req.GetName()
	if _, err := c.nodeRow(ctx, node); err != nil {
		return nil, err
	}
	key := coord.DrainKey(node)
	rec := schema.DrainRecord{Since: c.clock.Now().UTC(), Via: c.node}
	_, err := c.cli.Txn(ctx).If(clientv3.Compare(clientv3.CreateRevision(key), "=", 0)).
		Then(clientv3.OpPut(key, coord.MustJSON(rec))).Commit()
	if err != nil {
		return nil, etcdUnavailable("drain node "+node, err)
	}
	c.log.Info("node drained", "node", node)
	return c.nodeRow(ctx, node)
}

// UndrainNode ends a drain: the node takes new work again.
func (c *Server) UndrainNode(ctx context.Context, req *api.NodeRequest) (*api.Document, error) {
	node := req.GetName()
	if _, err := c.nodeRow(ctx, node); err != nil {
		return nil, err
	}
	if _, err := c.cli.Delete(ctx, coord.DrainKey(node)); err != nil {
		return nil, etcdUnavailable("undrain node "+node, err)
	}
	c.log.Info("node undrained", "node", node)
	return c.nodeRow(ctx, node)
}
