package client

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/gtrain/gtrain/api"
	"github.com/gtrain/gtrain/model"
	"github.com/gtrain/gtrain/pserver/wire"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/encoding/protowire"
)

// Pull fills params (one slice per model parameter) from every pserver once
// each has applied minStep steps, and returns the lowest and highest step
// seen (they differ only in async mode, or when a sync trainer is behind).
// A pserver that rolls back past rollbackEpoch meanwhile aborts the pull.
func (c *Client) Pull(ctx context.Context, minStep, rollbackEpoch int64, params [][]float32) (lowest, highest int64, err error) {
	return c.PullState(ctx, minStep, rollbackEpoch, params, nil)
}

// PullState is Pull that also fills state with the optimizer's slots, each
// of the same step as its parameters: state[k][j] is slot k of parameter j
// (as many slots as the optimizer keeps; nil: none pulled).
func (c *Client) PullState(ctx context.Context, minStep, rollbackEpoch int64, params [][]float32, state [][][]float32) (lowest, highest int64, err error) {
	steps := make([]int64, len(c.servers))
	arrays := append([][][]float32{params}, state...)
	err = c.eachServer(ctx, func(ctx context.Context, i int) error {
		var err error
		srv := c.servers[i]
		req := &api.PullRequest{MinStep: minStep, Epoch: rollbackEpoch, WithState: state != nil}
		if wire.DecodesInPlace() {
			steps[i], err = c.pullInto(ctx, i, srv, req, arrays)
		} else {
			steps[i], err = c.pullDecoded(ctx, i, srv, req, arrays)
		}
		if err != nil {
			return fmt.Errorf("pull from pserver %d: %w", i, err)
		}
		return nil
	})
	if err != nil {
		return 0, 0, err
	}
	lowest, highest = steps[0], steps[0]
	for _, s := range steps {
		lowest, highest = min(lowest, s), max(highest, s)
	}
	return lowest, highest, nil
}

// pullInto decodes the reply's floats straight into arrays: the
// parameters, then the optimizer slots a with_state pull asked for.
func (c *Client) pullInto(ctx context.Context, i int, srv api.PServerClient, req *api.PullRequest, arrays [][][]float32) (int64, error) {
	stream, err := srv.Pull(ctx, req, grpc.ForceCodecV2(wire.Codec{}))
	if err != nil {
		return 0, err
	}
	sink := &paramSink{c: c, server: i, arrays: arrays}
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
func (c *Client) pullDecoded(ctx context.Context, i int, srv api.PServerClient, req *api.PullRequest, arrays [][][]float32) (int64, error) {
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
		dst, off, err := stateDst(arrays, b, msg.Offset)
		if err != nil {
			return 0, err
		}
		if int(off)+len(vals) > len(dst) {
			return 0, fmt.Errorf("block %d chunk out of bounds", b.ID)
		}
		copy(dst[off:], vals)
	}
}

// paramSink decodes api.ParamChunk (step 1, block 2, offset 3, data 4,
// region floats 5) into the trainer's parameters.
type paramSink struct {
	c            *Client
	server       int
	arrays       [][][]float32 // the parameters, then any optimizer slots pulled
	step         int64
	block        int32
	offset       int64
	regionFloats int64
	region       *regionSlot // the push's region (PushPull), or nil
}

// Reset gives every field its proto3 default: zero values are not on the wire.
func (p *paramSink) Reset()                      { p.step, p.block, p.offset, p.regionFloats = 0, 0, 0, 0 }
func (p *paramSink) DataField() protowire.Number { return 4 }

// Done copies a chunk written into the push's region to its place.
func (p *paramSink) Done() error {
	if p.regionFloats == 0 {
		return nil
	}
	b, ok := p.c.byID[int(p.block)]
	if !ok || b.Server != p.server || p.region == nil {
		return fmt.Errorf("%w: pserver %d wrote block %d into a region this pull has not", wire.ErrMalformed, p.server, p.block)
	}
	return p.region.take(b, p.offset, p.regionFloats, p.arrays[0][b.Param][b.Offset:b.Offset+b.Len])
}

func (p *paramSink) Varint(num protowire.Number, v uint64) {
	switch num {
	case 1:
		p.step = int64(v)
	case 2:
		p.block = int32(int64(v))
	case 3:
		p.offset = int64(v)
	case 5:
		p.regionFloats = int64(v)
	}
}

func (p *paramSink) DataDst(n int) ([]byte, error) {
	b, ok := p.c.byID[int(p.block)]
	if !ok || b.Server != p.server {
		return nil, fmt.Errorf("%w: pserver %d sent block %d", wire.ErrMalformed, p.server, p.block)
	}
	dst, off, err := stateDst(p.arrays, b, p.offset)
	if err != nil {
		return nil, err
	}
	return wire.FloatBytes(dst, off, n, fmt.Sprintf("block %d", b.ID))
}

// stateDst is where a chunk of block b at offset goes: offset k*len+i is
// value i of arrays[k] (the parameters, then the optimizer's slots), so a
// chunk never spans two of them.
func stateDst(arrays [][][]float32, b Block, offset int64) ([]float32, int64, error) {
	k := int64(0)
	if b.Len > 0 && offset >= 0 {
		k = offset / int64(b.Len)
	}
	if offset < 0 || k >= int64(len(arrays)) {
		return nil, 0, fmt.Errorf("%w: block %d: offset %d past the %d arrays pulled", wire.ErrMalformed, b.ID, offset, len(arrays))
	}
	return arrays[k][b.Param][b.Offset : b.Offset+b.Len], offset - k*int64(b.Len), nil
}
