package client

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/gtrain/gtrain/api"
	"github.com/gtrain/gtrain/model"
	"github.com/gtrain/gtrain/pserver/wire"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// Push sends gradient sums (one slice per model parameter) of step's
// micro-batch microBatch (sync; the wire's trainer_id field carries it; async
// ignores it), worked in the master's rollbackEpoch over records records, to
// every pserver; checkpoint asks the pservers to snapshot once the step is applied.
func (c *Client) Push(ctx context.Context, microBatch int, step, rollbackEpoch, records int64, checkpoint bool, grads [][]float32, opts ...PushOption) error {
	h := pushHeader{trainer: int32(microBatch), step: step, rollbackEpoch: rollbackEpoch, records: records, checkpoint: checkpoint}
	if err := c.apply(&h, opts); err != nil {
		return err
	}
	return c.eachServer(ctx, func(ctx context.Context, i int) error { return c.pushTo(ctx, i, h, grads) })
}

// PushOption changes how a push sends.
type PushOption func(*pushHeader)

// GradientPiece is one message of a push overlapped with the backward
// pass: it may be sent once the first End floats of parameter Param's
// gradient are final.
type GradientPiece struct{ Param, End int }

// WaitForGradient makes a push send each pserver's pieces as their
// gradients become final, while the backward pass computes them, as
// PyTorch's DDP overlaps its all-reduce with the backward pass: wait(ctx,
// pieces) returns once one of pieces is final, with its index (the first
// final one in the slice: the push lists them in the order it prefers,
// the first parameters first, each parameter's first rows before its
// last). A push thus never waits for one piece while another is ready: a
// layer's bias, final after its whole weight, does not hold back the
// weight's rows. An error from wait ends the push with it.
func WaitForGradient(wait func(ctx context.Context, pieces []GradientPiece) (int, error)) PushOption {
	return func(h *pushHeader) { h.wait = wait }
}

// WaitBeforePull makes a PushPull wait, once a pserver acknowledged its
// blocks and before it writes the next step's parameters that pserver
// sends into params, until wait(ctx, held) returns, held being the
// parameters that pserver holds blocks of: a push overlapped with the
// backward pass must not change the parameters it still reads, but a
// pserver holding only parameters it reads no more may be read from while
// it computes. An error from wait leaves that pserver's parameters
// untouched and the push applied (the caller pulls).
func WaitBeforePull(wait func(ctx context.Context, held []int) error) PushOption {
	return func(h *pushHeader) { h.beforePull = wait }
}

// OnParams makes a PushPull call written(j, step) once every pserver
// holding blocks of parameter j answered with the next step's parameters
// to the end of its stream (step, or -1 when they answered with
// different steps), from the PushPull's goroutines, before it returns: a
// trainer may start reading j then, while other pservers' parameters are
// on their way. A parameter whose pservers did not all answer so is not
// told.
func OnParams(written func(param int, step int64)) PushOption {
	return func(h *pushHeader) { h.onParams = written }
}

// apply applies opts to h, and places its rows (Rows) on their pservers.
func (c *Client) apply(h *pushHeader, opts []PushOption) error {
	for _, o := range opts {
		o(h)
	}
	if h.batch != nil {
		return c.placeRows(h.batch)
	}
	return nil
}

// pushHeader is what every message of one push repeats.
type pushHeader struct {
	trainer       int32
	step          int64
	rollbackEpoch int64
	records       int64
	checkpoint    bool
	wait          func(ctx context.Context, pieces []GradientPiece) (int, error) // nil: every gradient is final
	beforePull    func(ctx context.Context, held []int) error                    // nil: params are free to write
	onParams      func(param int, step int64)                                    // OnParams
	answered      func(server int, step int64)                                   // a PushPull's: pserver server's parameters are all written
	batch         *batchRows                                                     // Rows: nil without
	carry         *api.TablesRowsPush                                            // the rows the first message carries (PushPullRows, PushWithRows)
}

// chunk is one message of the push: data at offset within block (block -1
// and no data: the header alone, for a pserver that holds no block).
func (h pushHeader) chunk(block, offset int, data []float32) *api.PushChunk {
	return &api.PushChunk{TrainerId: h.trainer, Step: h.step, Records: h.records, Checkpoint: h.checkpoint, Epoch: h.rollbackEpoch,
		Block: int32(block), Offset: int64(offset), Data: model.Float32Bytes(data)}
}

// pushTo streams the blocks pserver i holds. A push with rows (Rows)
// carries that pserver's in its first message (PushWithRows, rideFirst);
// else they go first in calls of their own.
func (c *Client) pushTo(ctx context.Context, i int, h pushHeader, grads [][]float32) error {
	calls := h.rowCalls(i)
	if rode, err := rideFirst(&c.olderPushRows[i], h, calls, func(hr pushHeader) error {
		return c.pushVia(ctx, i, c.servers[i].PushWithRows, hr, grads)
	}); rode {
		return err
	}
	if applied, err := c.pushRowsTo(ctx, i, calls); err != nil || applied {
		return err
	}
	return c.pushVia(ctx, i, c.servers[i].Push, h, grads)
}

// pushOpener opens a Push or PushWithRows stream.
type pushOpener func(ctx context.Context, opts ...grpc.CallOption) (api.PServer_PushClient, error)

// pushVia streams the blocks pserver i holds through open (h.carry in the
// first message).
func (c *Client) pushVia(ctx context.Context, i int, open pushOpener, h pushHeader, grads [][]float32) error {
	stream, err := open(ctx, grpc.ForceCodecV2(wire.Codec{})) // it lends (sendBlocks)
	if err != nil {
		return fmt.Errorf("push to pserver %d: %w", i, err)
	}
	if _, err := c.sendBlocks(ctx, i, stream.SendMsg, h, grads, nil); err != nil {
		return sendFailed(i, func() error { _, err := stream.CloseAndRecv(); return err }, err)
	}
	if _, err := stream.CloseAndRecv(); err != nil && status.Code(err) != codes.AlreadyExists {
		return fmt.Errorf("push to pserver %d: %w", i, err)
	}
	return nil // AlreadyExists: this pserver applied the step with our push in it
}

// sendBlocks sends the gradient of the blocks pserver i holds, or the
// header alone if it holds none; sent says whether it held any. send is
// the SendMsg of a stream that uses wire.Codec.
//
// The gradient is lent to gRPC (wire.Loans), not copied, and nothing
// waits for gRPC to give it back: the push is acknowledged only once the
// pserver received every byte, so gRPC read them all before the caller
// may change grads; a push that fails is a stream the pserver reads no more.
// With a region (not nil), each piece is copied into it instead, and the
// message only names it.
func (c *Client) sendBlocks(ctx context.Context, i int, send func(any) error, h pushHeader, grads [][]float32, rg *regionSlot) (sent bool, err error) {
	var loans wire.Loans
	chunk := func(block, offset int, data []float32) *api.PushChunk {
		m := h.chunk(block, offset, data)
		m.Rows, h.carry = h.carry, nil // the first message's
		return m
	}
	pieces := c.pieces(i)
	for len(pieces) > 0 {
		k := 0
		if h.wait != nil {
			if k, err = h.wait(ctx, pieces.needs()); err != nil {
				return sent, err
			}
		}
		p := pieces[k]
		src := grads[p.b.Param][p.b.Offset+p.off : p.b.Offset+p.end]
		var msg any
		if rg != nil {
			rg.put(p.b, p.off, src)
			m := chunk(p.b.ID, p.off, nil)
			m.Region, m.RegionFloats = rg.r.ID, int64(len(src))
			msg = m
		} else {
			msg = loans.Lend(chunk(p.b.ID, p.off, src))
		}
		if err := send(msg); err != nil {
			return sent, err
		}
		sent = true
		pieces = slices.Delete(pieces, k, k+1)
	}
	if !sent {
		return false, send(chunk(-1, 0, nil))
	}
	return true, nil
}

// piece is one message of a push: floats [off, end) of block b.
type piece struct {
	b        Block
	off, end int
}

type pieceList []piece

// pieces cuts pserver i's blocks, in sendOrder, into messages of at most
// wire.ChunkFloats floats.
func (c *Client) pieces(i int) pieceList {
	var out pieceList
	for _, b := range c.sendOrder(i) {
		for off := 0; off < b.Len; off += wire.ChunkFloats {
			out = append(out, piece{b: b, off: off, end: min(off+wire.ChunkFloats, b.Len)})
		}
	}
	return out
}

// needs is what each piece waits for: its parameter's gradient final up to
// the piece's end.
func (l pieceList) needs() []GradientPiece {
	out := make([]GradientPiece, len(l))
	for k, p := range l {
		out[k] = GradientPiece{Param: p.b.Param, End: p.b.Offset + p.end}
	}
	return out
}

// sendOrder is pserver i's blocks in ID order: the first parameters' first
// (the built-in models' backward pass ends with their deltas and then
// computes the weight gradients in the order the next forward pass reads
// them: model.Progress.Ready), each parameter's in offset order (its first
// rows are final first). A piece final sooner goes sooner whatever its
// place (sendBlocks).
func (c *Client) sendOrder(i int) []Block { return BlocksOf(c.blocks, i) }

// heldBy is the parameters pserver i holds blocks of.
func (c *Client) heldBy(i int) []int {
	var held []int
	for _, b := range c.blocks {
		if b.Server == i && !slices.Contains(held, b.Param) {
			held = append(held, b.Param)
		}
	}
	return held
}

// sendFailed turns a failed Send into the push's outcome: the server's real
// status, where AlreadyExists means the step was applied with our push in it.
// end reads the stream's status (Send fails with io.EOF when the server ended it).
func sendFailed(i int, end func() error, err error) error {
	if errors.Is(err, io.EOF) {
		if rerr := end(); rerr != nil {
			err = rerr
		}
	}
	if status.Code(err) == codes.AlreadyExists {
		return nil
	}
	return fmt.Errorf("push to pserver %d: %w", i, err)
}
