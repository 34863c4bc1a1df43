package client

import (
	"context"
	"log/slog"
	"slices"
	"sync"

	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/gtrain/gtrain/internal/jobauth"
)

// Dynamic is a Client that follows the pservers' registrations: a restarted
// pserver comes back at a new address, and Refresh re-discovers it. It
// follows the job's layout generation too (dynamic_layout.go): after a
// re-shard, Refresh cuts the parameters over the new pservers.
type Dynamic struct {
	cli   *clientv3.Client
	job   string
	sizes []int // of the parameters, whatever the cut
	log   *slog.Logger
	creds jobauth.Dial

	mu     sync.Mutex
	gen    int64 // layout generation of n and blocks
	n      int
	blocks []Block
	addrs  []Target
	c      *Client
}

// NewDynamic waits for all n pservers of job (the spec's count; a re-sharded
// job's layout record overrides it) and connects to them with creds (zero:
// plaintext, no job credential).
func NewDynamic(ctx context.Context, cli *clientv3.Client, job string, n int, blocks []Block, creds jobauth.Dial, log *slog.Logger) (*Dynamic, error) {
	d := &Dynamic{cli: cli, job: job, n: n, blocks: blocks, sizes: paramSizes(blocks), log: log, creds: creds}
	if err := d.Refresh(ctx); err != nil {
		return nil, err
	}
	return d, nil
}

// Client returns the current client.
func (d *Dynamic) Client() *Client {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.c
}

// PeerGone reports whether err from a call may mean its server is gone or
// restarting at a new address, so that Refresh (for a pserver) or another
// try finds where it serves now: Unavailable, DeadlineExceeded, or
// Unimplemented (the address of a dead master or pserver, still published
// until its lease expires, may already be reused by another gRPC server on
// that host).
func PeerGone(err error) bool {
	switch status.Code(err) {
	case codes.Unavailable, codes.DeadlineExceeded, codes.Unimplemented:
		return true
	}
	return false
}

// Refresh re-reads the layout and the registrations (waiting for missing
// pservers) and reconnects if the layout or any address changed.
func (d *Dynamic) Refresh(ctx context.Context) error {
	gen, n, blocks, err := d.layout(ctx)
	if err != nil {
		return err
	}
	addrs, err := Discover(ctx, d.cli, d.job, gen, n, d.log)
	if err != nil {
		return err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.c != nil && gen == d.gen && slices.Equal(addrs, d.addrs) {
		return nil
	}
	c, err := NewClientTo(addrs, blocks, d.creds)
	if err != nil {
		return err
	}
	if d.c != nil {
		d.c.Close()
		if d.log != nil {
			d.log.Info("pservers moved; reconnected", "addrs", addrs, "layout_generation", gen)
		}
	}
	d.addrs, d.c, d.gen, d.n, d.blocks = addrs, c, gen, n, blocks
	return nil
}

// Close closes the current client.
func (d *Dynamic) Close() {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.c != nil {
		d.c.Close()
	}
}
