package pserver

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/gtrain/gtrain/api"
	"github.com/gtrain/gtrain/model"
	"golang.org/x/sync/errgroup"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// Client talks to every pserver of a job; it scatters gradients and gathers
// parameters block by block.
type Client struct {
	conns   []*grpc.ClientConn
	servers []api.PServerClient
	blocks  []Block
	byID    map[int]Block
}

// NewClient dials the pservers at addrs (index order). blocks is the job's
// partition (Partition over the model's parameter sizes).
func NewClient(addrs []string, blocks []Block) (*Client, error) {
	c := &Client{blocks: blocks, byID: map[int]Block{}}
	for _, b := range blocks {
		c.byID[b.ID] = b
	}
	for i, a := range addrs {
		conn, err := grpc.NewClient(a, DialOptions()...)
		if err != nil {
			c.Close()
			return nil, fmt.Errorf("pserver %d at %s: %w", i, a, err)
		}
		c.conns = append(c.conns, conn)
		c.servers = append(c.servers, api.NewPServerClient(conn))
	}
	return c, nil
}

// Close closes every connection.
func (c *Client) Close() {
	for _, conn := range c.conns {
		_ = conn.Close()
	}
}

// Pull fills params (one slice per model parameter) from every pserver once
// each has applied minStep steps, and returns the lowest and highest step
// seen (they differ only in async mode, or when a sync trainer is behind).
func (c *Client) Pull(ctx context.Context, minStep, epoch int64, params [][]float32) (lowest, highest int64, err error) {
	steps := make([]int64, len(c.servers))
	g, ctx := errgroup.WithContext(ctx)
	for i, srv := range c.servers {
		g.Go(func() error {
			var err error
			if littleEndian {
				steps[i], err = c.pullInto(ctx, i, srv, &api.PullRequest{MinStep: minStep, Epoch: epoch}, params)
			} else {
				steps[i], err = c.pullDecoded(ctx, i, srv, &api.PullRequest{MinStep: minStep, Epoch: epoch}, params)
			}
			if err != nil {
				return fmt.Errorf("pull from pserver %d: %w", i, err)
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return 0, 0, err
	}
	lowest, highest = steps[0], steps[0]
	for _, s := range steps {
		lowest, highest = min(lowest, s), max(highest, s)
	}
	return lowest, highest, nil
}

// pullInto decodes the reply's floats straight into params.
func (c *Client) pullInto(ctx context.Context, i int, srv api.PServerClient, req *api.PullRequest, params [][]float32) (int64, error) {
	stream, err := srv.Pull(ctx, req, grpc.ForceCodecV2(tensorCodec{}))
	if err != nil {
		return 0, err
	}
	sink := &paramSink{c: c, server: i, params: params}
	for {
		err := stream.RecvMsg(sink)
		if errors.Is(err, io.EOF) {
			return sink.step, nil
		}
		if err != nil {
			return 0, err
		}
	}
}

// pullDecoded is the plain protobuf path (big-endian hosts).
func (c *Client) pullDecoded(ctx context.Context, i int, srv api.PServerClient, req *api.PullRequest, params [][]float32) (int64, error) {
	stream, err := srv.Pull(ctx, req)
	if err != nil {
		return 0, err
	}
	var step int64
	for {
		msg, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			return step, nil
		}
		if err != nil {
			return 0, err
		}
		step = msg.Step
		b, ok := c.byID[int(msg.Block)]
		if !ok || b.Server != i {
			return 0, fmt.Errorf("unexpected block %d", msg.Block)
		}
		vals, err := model.BytesFloat32(msg.Data)
		if err != nil {
			return 0, err
		}
		dst := params[b.Param][b.Offset : b.Offset+b.Len]
		if msg.Offset < 0 || int(msg.Offset)+len(vals) > len(dst) {
			return 0, fmt.Errorf("block %d chunk out of bounds", b.ID)
		}
		copy(dst[msg.Offset:], vals)
	}
}

// Push sends this trainer's gradient sums (one slice per model parameter) for
// step to every pserver.
func (c *Client) Push(ctx context.Context, trainer int, step, epoch, records int64, checkpoint bool, grads [][]float32) error {
	g, ctx := errgroup.WithContext(ctx)
	for i, srv := range c.servers {
		g.Go(func() error {
			stream, err := srv.Push(ctx)
			if err != nil {
				return fmt.Errorf("push to pserver %d: %w", i, err)
			}
			header := &api.PushChunk{TrainerId: int32(trainer), Step: step, Records: records, Block: -1, Checkpoint: checkpoint, Epoch: epoch}
			sent := false
			for _, b := range c.blocks {
				if b.Server != i {
					continue
				}
				src := grads[b.Param][b.Offset : b.Offset+b.Len]
				for off := 0; off < len(src); off += chunkFloats {
					end := min(off+chunkFloats, len(src))
					msg := &api.PushChunk{TrainerId: int32(trainer), Step: step, Records: records, Checkpoint: checkpoint, Epoch: epoch,
						Block: int32(b.ID), Offset: int64(off), Data: model.Float32Bytes(src[off:end])}
					if err := stream.Send(msg); err != nil {
						if err = pushErr(stream, err); status.Code(err) == codes.AlreadyExists {
							return nil
						}
						return fmt.Errorf("push to pserver %d: %w", i, err)
					}
					sent = true
				}
			}
			if !sent {
				if err := stream.Send(header); err != nil {
					if err = pushErr(stream, err); status.Code(err) == codes.AlreadyExists {
						return nil
					}
					return fmt.Errorf("push to pserver %d: %w", i, err)
				}
			}
			if _, err := stream.CloseAndRecv(); err != nil && status.Code(err) != codes.AlreadyExists {
				return fmt.Errorf("push to pserver %d: %w", i, err)
			}
			return nil // AlreadyExists: this pserver applied the step with our push in it
		})
	}
	return g.Wait()
}

// pushErr turns io.EOF from Send into the server's real status.
func pushErr(stream api.PServer_PushClient, err error) error {
	if errors.Is(err, io.EOF) {
		if _, rerr := stream.CloseAndRecv(); rerr != nil {
			return rerr
		}
	}
	return err
}

// Restore rolls every pserver back to step (a complete global checkpoint).
func (c *Client) Restore(ctx context.Context, step, epoch, term int64) error {
	g, ctx := errgroup.WithContext(ctx)
	for i, srv := range c.servers {
		g.Go(func() error {
			if _, err := srv.Restore(ctx, &api.RestoreRequest{Step: step, Epoch: epoch, Term: term}); err != nil {
				return fmt.Errorf("restore pserver %d to step %d: %w", i, step, err)
			}
			return nil
		})
	}
	return g.Wait()
}

// Steps returns each pserver's applied step count and rollback epoch.
func (c *Client) Steps(ctx context.Context) (steps, epochs []int64, err error) {
	steps, epochs = make([]int64, len(c.servers)), make([]int64, len(c.servers))
	for i, srv := range c.servers {
		r, err := srv.Info(ctx, &api.InfoRequest{})
		if err != nil {
			return nil, nil, fmt.Errorf("info of pserver %d: %w", i, err)
		}
		steps[i], epochs[i] = r.Step, r.Epoch
	}
	return steps, epochs, nil
}
