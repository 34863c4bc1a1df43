package pserver

import (
	"context"
	"fmt"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/gtrain/gtrain/api"
	"github.com/gtrain/gtrain/model"
	"github.com/gtrain/gtrain/pserver/wire"
	"google.golang.org/protobuf/proto"
)

// maxRowsPerCall bounds the ids of one call (wire.MaxRowsPerCall).
const maxRowsPerCall = wire.MaxRowsPerCall

// PullRows answers rows of a table once the shard reached min_step.
func (s *Server) PullRows(ctx context.Context, req *api.RowsRequest) (*api.RowsReply, error) {
	if len(req.Ids) > maxRowsPerCall {
		return nil, status.Errorf(codes.InvalidArgument, "pull rows: %d ids, at most %d a call", len(req.Ids), maxRowsPerCall)
	}
	dim, err := s.awaitTable(ctx, req)
	if err != nil {
		return nil, err
	}
	vals := make([]float32, len(req.Ids)*dim)
	step, err := s.shard.PullRows(req.Table, req.Ids, vals)
	if err != nil {
		return nil, statusOf(err)
	}
	return &api.RowsReply{Step: step, Data: model.Float32Bytes(vals)}, nil
}

// awaitTable is the row dimension of req's table once the shard reached
// req's min_step (a rollback past its epoch meanwhile aborts, as a pull).
func (s *Server) awaitTable(ctx context.Context, req *api.RowsRequest) (int, error) {
	dim, err := s.shard.TableDim(req.Table)
	if err != nil {
		return 0, statusOf(err)
	}
	_, _, restores := s.shard.Advanced()
	return dim, s.awaitStep(ctx, &api.PullRequest{MinStep: req.MinStep, Epoch: req.Epoch}, restores)
}

// PushRows hands a push's row gradients to the shard (Shard.PushRows).
func (s *Server) PushRows(ctx context.Context, req *api.RowsPush) (*api.PushReply, error) {
	if len(req.Ids) > maxRowsPerCall {
		return nil, status.Errorf(codes.InvalidArgument, "push rows: %d ids, at most %d a call", len(req.Ids), maxRowsPerCall)
	}
	grad, err := model.BytesFloat32(req.Data)
	if err != nil {
		return nil, status.Errorf(codes.InvalidArgument, "push rows: %v", err)
	}
	if req.Records < 0 {
		return nil, statusOf(fmt.Errorf("%d records: %w", req.Records, ErrBadRecords))
	}
	err = s.shard.PushRows(int(req.TrainerId), req.Step, req.Epoch, req.Records, req.Table, RowGrads{IDs: req.Ids, Grad: grad})
	if err != nil {
		return nil, statusOf(err)
	}
	return &api.PushReply{Step: s.shard.Step()}, nil
}

// exportChunkRows bounds the rows of one ExportRows message.
const exportChunkRows = 1 << 14

// ExportRows streams the rows a table stores once the shard reached
// min_step.
func (s *Server) ExportRows(req *api.RowsRequest, stream api.PServer_ExportRowsServer) error {
	dim, err := s.awaitTable(stream.Context(), req)
	if err != nil {
		return err
	}
	step, ids, vals, err := s.shard.ExportRows(req.Table)
	if err != nil {
		return statusOf(err)
	}
	for lo := 0; lo == 0 || lo < len(ids); lo += exportChunkRows {
		hi := min(lo+exportChunkRows, len(ids))
		msg := &api.RowsReply{Step: step, Ids: ids[lo:hi], Data: model.Float32Bytes(vals[lo*dim : hi*dim])}
		if err := stream.Send(msg); err != nil {
			return err
		}
	}
	return nil
}

// PullTablesRows answers the rows of several tables (PullRows each, in
// order; the first refused refuses the call): one call a step for a
// recommender's id fields, where one a field cost a round trip each.
func (s *Server) PullTablesRows(ctx context.Context, req *api.TablesRowsRequest) (*api.TablesRowsReply, error) {
	if err := checkTablesRows(len(req.Tables), func(i int) int { return len(req.Tables[i].Ids) }); err != nil {
		return nil, err
	}
	reply := &api.TablesRowsReply{Tables: make([]*api.RowsReply, len(req.Tables))}
	for i, r := range req.Tables {
		var err error
		if reply.Tables[i], err = s.PullRows(ctx, r); err != nil {
			return nil, err
		}
	}
	return reply, nil
}

// PushTablesRows hands the row gradients of several tables to the shard
// (PushRows each, in order; the first refused refuses the call, the tables
// before it kept, as their own calls would have been).
func (s *Server) PushTablesRows(ctx context.Context, req *api.TablesRowsPush) (*api.PushReply, error) {
	if err := checkTablesRows(len(req.Tables), func(i int) int { return len(req.Tables[i].Ids) }); err != nil {
		return nil, err
	}
	reply := &api.PushReply{Step: s.shard.Step()}
	for _, r := range req.Tables {
		var err error
		if reply, err = s.PushRows(ctx, r); err != nil {
			return nil, err
		}
	}
	return reply, nil
}

// takeRows hands the row gradients one message of a push carried
// (PushChunk.rows, raw) to the shard, as PushTablesRows does; the tables
// are counted before protobuf decodes them, as the codec counts those of a
// PushTablesRows. (A pserver on a big-endian host decodes whole chunks
// with protobuf, rows and all, before any count: receiveDecoded.)
func (s *Server) takeRows(ctx context.Context, b []byte) error {
	if err := wire.CountTables(b); err != nil {
		return status.Errorf(codes.InvalidArgument, "push: rows: %v", err)
	}
	var req api.TablesRowsPush
	if err := proto.Unmarshal(b, &req); err != nil {
		return status.Errorf(codes.InvalidArgument, "push: rows: %v", err)
	}
	_, err := s.PushTablesRows(ctx, &req)
	return err
}

// checkTablesRows bounds a call of n tables' rows (ids(i) of table i) as
// maxRowsPerCall bounds one table's, in all (the client packs a step's
// tables into calls within it), and its tables (the codec counted them
// already: wire.MaxTablesPerCall).
func checkTablesRows(n int, ids func(i int) int) error {
	total := 0
	for i := range n {
		total += ids(i)
	}
	if n > wire.MaxTablesPerCall || total > maxRowsPerCall {
		return status.Errorf(codes.InvalidArgument, "rows of %d tables: %d ids, at most %d tables and %d ids a call", n, total, wire.MaxTablesPerCall, maxRowsPerCall)
	}
	return nil
}
