package client

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/gtrain/gtrain/api"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// Health is what one pserver's answer to a health probe says of it.
type Health int

const (
	// Answered: the pserver answered within the probe's deadline.
	Answered Health = iota
	// Silent: it took the call but did not answer in time — alive but not
	// progressing (stopped, deadlocked, swapping), the sign of a hang.
	Silent
	// Unreachable: the call failed at once (connection refused, reset): the
	// process is gone or moving, which is not a hang.
	Unreachable
)

// Probe asks every pserver for its Info at once, each call bounded by
// timeout, and returns each one's Health in index order.
func (c *Client) Probe(ctx context.Context, timeout time.Duration) []Health {
	out := make([]Health, len(c.servers))
	var wg sync.WaitGroup
	for i, srv := range c.servers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			pctx, cancel := context.WithTimeout(ctx, timeout)
			defer cancel()
			_, err := srv.Info(pctx, &api.InfoRequest{})
			out[i] = healthOf(err)
		}()
	}
	wg.Wait()
	return out
}

func healthOf(err error) Health {
	switch {
	case err == nil:
		return Answered
	case errors.Is(err, context.DeadlineExceeded) || status.Code(err) == codes.DeadlineExceeded:
		return Silent
	default:
		return Unreachable
	}
}
