package client

import (
	"context"
	"log/slog"
	"slices"
	"sync"

	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/grpc/credentials"
)

// Dynamic is a Client that follows the pservers' registrations: a restarted
// pserver comes back at a new address, and Refresh re-discovers it.
type Dynamic struct {
	cli    *clientv3.Client
	job    string
	n      int
	blocks []Block
	log    *slog.Logger
	creds  credentials.TransportCredentials

	mu    sync.Mutex
	addrs []string
	c     *Client
}

// NewDynamic waits for all n pservers of job and connects to them with
// creds (nil: plaintext).
func NewDynamic(ctx context.Context, cli *clientv3.Client, job string, n int, blocks []Block, creds credentials.TransportCredentials, log *slog.Logger) (*Dynamic, error) {
	d := &Dynamic{cli: cli, job: job, n: n, blocks: blocks, log: log, creds: creds}
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

// Refresh re-reads the registrations (waiting for missing pservers) and
// reconnects if any address changed.
func (d *Dynamic) Refresh(ctx context.Context) error {
	addrs, err := Discover(ctx, d.cli, d.job, d.n, d.log)
	if err != nil {
		return err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.c != nil && slices.Equal(addrs, d.addrs) {
		return nil
	}
	c, err := NewClient(addrs, d.blocks, d.creds)
	if err != nil {
		return err
	}
	if d.c != nil {
		d.c.Close()
		if d.log != nil {
			d.log.Info("pservers moved; reconnected", "addrs", addrs)
		}
	}
	d.addrs, d.c = addrs, c
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
