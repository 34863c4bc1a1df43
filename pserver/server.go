package pserver

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/gtrain/gtrain/api"
	"github.com/gtrain/gtrain/checkpoint"
	"github.com/gtrain/gtrain/internal/clock"
	"github.com/gtrain/gtrain/model"
	"github.com/gtrain/gtrain/pserver/client"
	"github.com/gtrain/gtrain/pserver/region"
	"github.com/gtrain/gtrain/pserver/wire"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// Server exposes a Shard over gRPC.
type Server struct {
	api.UnimplementedPServerServer
	index  int
	shard  *Shard
	driver shardDriver // the shard's waiting for its checkpoint writer
	// restore loads the shard's checkpoint of a step and enters a rollback
	// epoch (nil: Restore unsupported).
	restore RestoreFunc
	termMu  sync.Mutex
	term    int64 // the highest master term that restored this shard
	// leaderTerm reads the term of the job's current master (nil: the
	// request's term is trusted; see CheckTerm).
	leaderTerm func(context.Context) (int64, error)
	// regions are the shared-memory regions trainers of this host attached
	// (nil: none taken; pserver/region).
	regions *shardRegions
}

// shardRegions is a registry of regions and where the shard's blocks lie
// in each (the shard's blocks never change: placed once).
type shardRegions struct {
	registry *region.Registry
	offsets  map[int]int
}

// WithRegions makes pushes that name a region of regions read their
// gradient from it, and PushPull write the parameters back into it. The
// registry must take regions of this shard's size (its blocks never
// change): a registry made for another shard is a bug of the caller, and
// panics here rather than at a stream.
func (s *Server) WithRegions(regions *region.Registry) *Server {
	if regions != nil {
		offsets, floats := client.RegionOffsets(s.shard.Blocks())
		if floats != regions.Floats() {
			panic(fmt.Sprintf("pserver: WithRegions: a registry of regions of %d floats for a shard of %d", regions.Floats(), floats))
		}
		s.regions = &shardRegions{registry: regions, offsets: offsets}
	}
	return s
}

// RestoreFunc puts a shard at the checkpoint of step and in the master's
// rollbackEpoch.
type RestoreFunc func(ctx context.Context, step, rollbackEpoch int64) error

// NewServer serves shard as pserver index; restore (may be nil) backs the
// Restore RPC; c (nil: clock.System) times a push's wait for the
// checkpoint writer.
func NewServer(index int, shard *Shard, restore RestoreFunc, c clock.Clock) *Server {
	return &Server{index: index, shard: shard, driver: newShardDriver(shard, c), restore: restore}
}

// Push receives one trainer's gradient for one step.
func (s *Server) Push(stream api.PServer_PushServer) error {
	p, step, err := s.receiveAndPush(stream)
	p.region.done()
	if err != nil {
		return err
	}
	return stream.SendAndClose(&api.PushReply{Step: step})
}

// PushWithRows is Push for a micro-batch with embedding rows, whose first
// message carries the rows this pserver owns: every push takes a message's
// rows before its gradient (receiveInto), so the method is Push's; as for
// PushPullRows, its name tells a trainer that this pserver does.
func (s *Server) PushWithRows(stream api.PServer_PushWithRowsServer) error {
	return s.Push(stream)
}

// receiveAndPush receives a pushed gradient and hands it to the shard; it
// returns what was pushed (the gradient's buffer goes back to the shard)
// and the shard's step after the push.
func (s *Server) receiveAndPush(stream pushStream) (pushed, int64, error) {
	receive := s.receiveDecoded
	if wire.DecodesInPlace() {
		receive = s.receiveInto
	}
	g, use, err := receive(stream)
	if err != nil {
		use.done()
		return pushed{}, 0, err
	}
	p := pushed{step: g.Step, rollbackEpoch: g.RollbackEpoch, region: use}
	_, step, err := s.driver.push(g)
	if err != nil {
		return p, 0, statusOf(err)
	}
	return p, step, nil
}

// pushed is the step and rollback epoch of a received push, and the region
// it came through (nil: none), which the caller gives back (done).
type pushed struct {
	step, rollbackEpoch int64
	region              *regionUse
}

// pushStream is the receiving side of Push, PushWithRows, PushPull and
// PushPullRows.
type pushStream interface {
	Recv() (*api.PushChunk, error)
	RecvMsg(m any) error
	Context() context.Context
}

// receiveInto decodes the stream's floats straight into a gradient buffer.
func (s *Server) receiveInto(stream pushStream) (*Gradient, *regionUse, error) {
	sink := &pushSink{shard: s.shard, regions: s.regions}
	for {
		err := stream.RecvMsg(sink)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, sink.use, err
		}
		if sink.regionErr != nil {
			// Unavailable, as a pserver gone: the trainer attaches a new
			// region, or pushes through the socket, and tries again.
			return nil, sink.use, status.Errorf(codes.Unavailable, "push: shared-memory region: %v", sink.regionErr)
		}
		if sink.rows != nil {
			if err := s.takeRows(stream.Context(), sink.rows); err != nil {
				return nil, sink.use, err
			}
		}
		if sink.refused != nil {
			// As receiveDecoded answers it: the trainer tells a push cut
			// over another layout (a re-shard under it) by this code.
			return nil, sink.use, status.Errorf(codes.InvalidArgument, "push: %v", sink.refused)
		}
	}
	if sink.g == nil {
		return nil, sink.use, status.Error(codes.InvalidArgument, "push: empty stream")
	}
	return sink.g, sink.use, nil
}

// receiveDecoded is the plain protobuf path (big-endian hosts).
func (s *Server) receiveDecoded(stream pushStream) (*Gradient, *regionUse, error) {
	var g *Gradient
	for {
		msg, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, nil, err
		}
		if g == nil {
			g = s.shard.NewGradient(int(msg.TrainerId), msg.Step, msg.Records)
		}
		g.Checkpoint = g.Checkpoint || msg.Checkpoint
		g.RollbackEpoch = msg.Epoch
		if msg.Rows != nil {
			if _, err := s.PushTablesRows(stream.Context(), msg.Rows); err != nil {
				return nil, nil, err
			}
		}
		if len(msg.Data) == 0 {
			continue
		}
		vals, err := model.BytesFloat32(msg.Data)
		if err != nil {
			return nil, nil, status.Errorf(codes.InvalidArgument, "push block %d: %v", msg.Block, err)
		}
		if err := g.Write(int(msg.Block), msg.Offset, vals); err != nil {
			return nil, nil, status.Errorf(codes.InvalidArgument, "push: %v", err)
		}
	}
	if g == nil {
		return nil, nil, status.Error(codes.InvalidArgument, "push: empty stream")
	}
	return g, nil, nil
}

// CheckTerm makes Restore ask leaderTerm for the term of the job's current
// master and refuse a request of any other term, rather than trust the
// term a caller claims (one that claimed a huge term would otherwise lock
// out every later real restore).
func (s *Server) CheckTerm(leaderTerm func(context.Context) (int64, error)) *Server {
	s.leaderTerm = leaderTerm
	return s
}

// Pull waits until the shard applied min_step steps, then streams its
// parameters, all of one step.
func (s *Server) Pull(req *api.PullRequest, stream api.PServer_PullServer) error {
	_, _, restores := s.shard.Advanced()
	if err := s.awaitStep(stream.Context(), req, restores); err != nil {
		return err
	}
	if req.WithState {
		return s.sendState(stream)
	}
	return s.sendParams(stream)
}

// sendParams streams the shard's parameters, all of one step.
func (s *Server) sendParams(stream grpc.ServerStream) error {
	return s.shard.View(func(step int64, b client.Block, param []float32) error {
		return sendFloats(stream, step, b, 0, param)
	})
}

// sendParamsVia writes the shard's parameters into the region the push
// came through, each block at its place, and tells each block written.
func (s *Server) sendParamsVia(stream grpc.ServerStream, u *regionUse) error {
	return s.shard.View(func(step int64, b client.Block, param []float32) error {
		off, ok := u.offsets[b.ID]
		if !ok || off+len(param) > u.e.Floats {
			return sendFloats(stream, step, b, 0, param) // not expected: the region places every block of the shard
		}
		copy(u.e.Params()[off:off+len(param)], param)
		return stream.SendMsg(&api.ParamChunk{Step: step, Block: int32(b.ID), RegionFloats: int64(len(param))})
	})
}

// sendState streams the shard's parameters and, after each block's, its
// optimizer slots at the offsets past the parameters (api.ParamChunk).
func (s *Server) sendState(stream grpc.ServerStream) error {
	return s.shard.ViewState(func(step int64, b client.Block, param []float32, slots [][]float32) error {
		for k, v := range append([][]float32{param}, slots...) {
			if err := sendFloats(stream, step, b, k*len(param), v); err != nil {
				return err
			}
		}
		return nil
	})
}

// sendFloats streams vals of block b in chunks, from float offset base.
// The chunks are lent to gRPC (wire.Loans), not copied: it returns once
// gRPC is done with them, since the caller's read lock is all that keeps
// the next step from changing vals.
func sendFloats(stream grpc.ServerStream, step int64, b client.Block, base int, vals []float32) error {
	var loans wire.Loans
	for off := 0; off < len(vals); off += wire.ChunkFloats {
		end := min(off+wire.ChunkFloats, len(vals))
		msg := &api.ParamChunk{Step: step, Block: int32(b.ID), Offset: int64(base + off), Data: model.Float32Bytes(vals[off:end])}
		if err := stream.SendMsg(loans.Lend(msg)); err != nil {
			_ = loans.Wait(stream.Context())
			return err
		}
	}
	return loans.Wait(stream.Context())
}

// awaitStep waits until the shard reached req's min_step. A restore since the
// shard's restore count was restores (the values waited on are gone) or a
// rollback past req's rollback epoch aborts it.
func (s *Server) awaitStep(ctx context.Context, req *api.PullRequest, restores int64) error {
	for {
		advanced, step, nowRestores := s.shard.Advanced()
		if nowRestores != restores || req.Epoch < s.shard.RollbackEpoch() {
			return status.Errorf(codes.Aborted, "pserver %d rolled back to step %d (rollback epoch %d) while waiting for step %d of rollback epoch %d",
				s.index, step, s.shard.RollbackEpoch(), req.MinStep, req.Epoch)
		}
		if step >= req.MinStep {
			return nil
		}
		select {
		case <-advanced:
		case <-ctx.Done():
			return status.FromContextError(ctx.Err()).Err()
		}
	}
}

// Info tells what this pserver holds.
func (s *Server) Info(ctx context.Context, _ *api.InfoRequest) (*api.InfoReply, error) {
	r := &api.InfoReply{Index: int32(s.index), Step: s.shard.Step(), Epoch: s.shard.RollbackEpoch()}
	for _, b := range s.shard.Blocks() {
		r.Blocks = append(r.Blocks, int32(b.ID))
	}
	return r, nil
}

// Restore rolls the shard back to a complete global checkpoint.
func (s *Server) Restore(ctx context.Context, req *api.RestoreRequest) (*api.RestoreReply, error) {
	if s.restore == nil {
		return nil, status.Error(codes.Unimplemented, "restore not configured")
	}
	// A deposed master's late Restore must not undo its successor's.
	s.termMu.Lock()
	defer s.termMu.Unlock()
	if req.Term < s.term {
		return nil, status.Errorf(codes.PermissionDenied, "pserver %d: restore from master term %d refused: term %d already restored it", s.index, req.Term, s.term)
	}
	if s.leaderTerm != nil {
		term, err := s.leaderTerm(ctx)
		if err != nil {
			return nil, status.Errorf(codes.Unavailable, "pserver %d: check the master's term: %v", s.index, err)
		}
		if req.Term != term {
			return nil, status.Errorf(codes.PermissionDenied, "pserver %d: restore from master term %d refused: the job's master leads in term %d", s.index, req.Term, term)
		}
	}
	s.term = req.Term
	if err := s.restore(ctx, req.Step, req.Epoch); err != nil {
		if checkpoint.Unusable(err) {
			// Not this step, but an older one may do: the master falls back.
			return nil, status.Errorf(codes.DataLoss, "pserver %d: restore step %d: %v", s.index, req.Step, err)
		}
		return nil, status.Errorf(codes.FailedPrecondition, "pserver %d: restore step %d: %v", s.index, req.Step, err)
	}
	return &api.RestoreReply{Step: s.shard.Step()}, nil
}

func statusOf(err error) error {
	switch {
	case errors.Is(err, ErrStaleStep):
		// The step is applied: this push is already in it (a retried or
		// repeated push), which the client counts as done.
		return status.Error(codes.AlreadyExists, err.Error())
	case errors.Is(err, ErrFutureStep), errors.Is(err, ErrRolledBack):
		return status.Error(codes.FailedPrecondition, err.Error())
	case errors.Is(err, ErrBadMicroBatch), errors.Is(err, ErrBadBlock), errors.Is(err, ErrBadGradient),
		errors.Is(err, ErrNonFinite), errors.Is(err, ErrBadRecords), errors.Is(err, ErrBadRows):
		return status.Error(codes.InvalidArgument, err.Error())
	}
	return status.Error(codes.Internal, fmt.Sprint(err))
}
