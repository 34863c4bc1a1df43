package client

import (
	"context"

	"golang.org/x/sync/errgroup"
)

// eachServer calls fn for every pserver i, concurrently, and returns the
// first error (the others' context is then cancelled). With one pserver, the
// common case of a small model, fn runs on the caller's goroutine: a step
// makes one or two such calls, and a goroutine per call is a wake-up more.
func (c *Client) eachServer(ctx context.Context, fn func(ctx context.Context, i int) error) error {
	if len(c.servers) == 1 {
		// As errgroup does: a stream fn left open ends with the call.
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		return fn(ctx, 0)
	}
	g, gctx := errgroup.WithContext(ctx)
	for i := range c.servers {
		g.Go(func() error { return fn(gctx, i) })
	}
	return g.Wait()
}
