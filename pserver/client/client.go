package client

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/gtrain/gtrain/api"
	"github.com/gtrain/gtrain/internal/jobauth"
	"github.com/gtrain/gtrain/pserver/wire"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// ErrCheckpointUnusable is a Restore that a pserver refused because its
// checkpoint file of the step cannot be loaded: missing, damaged, or no
// longer the file its record names (the server answers codes.DataLoss).
// Another step's may be: the master falls back to an older one.
var ErrCheckpointUnusable = errors.New("the pserver's checkpoint of that step cannot be loaded")

// Client talks to every pserver of a job; it scatters gradients and gathers
// parameters block by block.
type Client struct {
	conns   []*grpc.ClientConn
	servers []api.PServerClient
	blocks  []Block
	byID    map[int]Block
	regions []*regionSlot  // per pserver: nil unless reached through a local socket
	older   []atomic.Int64 // per pserver: calls of several tables' rows to make a table at a time before trying again (rows.go)
	// olderRows and olderPushRows: per pserver, pushes with rows to make
	// in two calls before trying PushPullRows, or PushWithRows, again
	// (pushrows.go)
	olderRows, olderPushRows []atomic.Int64
}

// NewClient dials the pservers at addrs (index order) with creds (zero:
// plaintext, no job credential). blocks is the job's partition (Partition over the model's
// parameter sizes).
func NewClient(addrs []string, blocks []Block, creds jobauth.Dial) (*Client, error) {
	targets := make([]Target, len(addrs))
	for i, a := range addrs {
		targets[i].Addr = a
	}
	return NewClientTo(targets, blocks, creds)
}

// NewClientTo is NewClient for targets that may name local sockets
// (Discover).
func NewClientTo(targets []Target, blocks []Block, creds jobauth.Dial) (*Client, error) {
	c := &Client{blocks: blocks, byID: map[int]Block{}, regions: newRegionSlots(targets), older: make([]atomic.Int64, len(targets)),
		olderRows: make([]atomic.Int64, len(targets)), olderPushRows: make([]atomic.Int64, len(targets))}
	for _, b := range blocks {
		c.byID[b.ID] = b
	}
	for i, t := range targets {
		conn, err := dial(t, creds)
		if err != nil {
			c.Close()
			return nil, fmt.Errorf("pserver %d at %s: %w", i, t.Addr, err)
		}
		c.conns = append(c.conns, conn)
		c.servers = append(c.servers, api.NewPServerClient(conn))
	}
	return c, nil
}

// dial connects to t: through its socket when it has one, under Addr's
// name all the same, so that TLS checks the pserver's certificate against
// the name it would over TCP.
func dial(t Target, creds jobauth.Dial) (*grpc.ClientConn, error) {
	if t.Socket == "" {
		return grpc.NewClient(t.Addr, wire.DialOptions(creds)...)
	}
	return grpc.NewClient("unix://"+t.Socket, append(wire.DialOptions(creds), grpc.WithAuthority(t.Addr),
		grpc.WithContextDialer(wire.DialLocal))...)
}

// Close closes every connection.
func (c *Client) Close() {
	for _, conn := range c.conns {
		_ = conn.Close()
	}
	c.closeRegions()
}

// Restore rolls every pserver back to step (a complete global checkpoint)
// and into the master's new rollbackEpoch; term is the master's leadership
// term, so a deposed master's late Restore is refused.
func (c *Client) Restore(ctx context.Context, step, rollbackEpoch, term int64) error {
	return c.eachServer(ctx, func(ctx context.Context, i int) error {
		_, err := c.servers[i].Restore(ctx, &api.RestoreRequest{Step: step, Epoch: rollbackEpoch, Term: term})
		if status.Code(err) == codes.DataLoss {
			return fmt.Errorf("restore pserver %d to step %d: %w: %s", i, step, ErrCheckpointUnusable, status.Convert(err).Message())
		}
		if err != nil {
			return fmt.Errorf("restore pserver %d to step %d: %w", i, step, err)
		}
		return nil
	})
}

// Steps returns each pserver's applied step count and the rollback epoch it
// was last restored in.
func (c *Client) Steps(ctx context.Context) (steps, rollbackEpochs []int64, err error) {
	steps, rollbackEpochs = make([]int64, len(c.servers)), make([]int64, len(c.servers))
	for i, srv := range c.servers {
		r, err := srv.Info(ctx, &api.InfoRequest{})
		if err != nil {
			return nil, nil, fmt.Errorf("info of pserver %d: %w", i, err)
		}
		steps[i], rollbackEpochs[i] = r.Step, r.Epoch
	}
	return steps, rollbackEpochs, nil
}
