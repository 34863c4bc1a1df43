package master

import (
	"context"
	"errors"

	"github.com/gtrain/gtrain/api"
	"github.com/gtrain/gtrain/master/core"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// Server adapts the Driver and the trainer registry to the Master gRPC service.
type Server struct {
	api.UnimplementedMasterServer
	driver   *Driver
	registry *TrainerRegistry
	trainers int
	// rollback serves RequestRollback (nil: not supported, e.g. async mode).
	rollback func(ctx context.Context, epoch int64, why string) error
}

// NewServer serves driver.
func NewServer(driver *Driver, registry *TrainerRegistry, trainers int) *Server {
	return &Server{driver: driver, registry: registry, trainers: trainers}
}

// RegisterTrainer hands out a dense trainer ID.
func (s *Server) RegisterTrainer(ctx context.Context, req *api.RegisterTrainerRequest) (*api.RegisterTrainerResponse, error) {
	id, err := s.registry.Register(ctx, req.Worker, req.LeaseId)
	if err != nil {
		return nil, s.grpcErr(err)
	}
	_, next := s.driver.Position()
	return &api.RegisterTrainerResponse{TrainerId: int32(id), Trainers: int32(s.trainers), NextStep: next}, nil
}

// GetTask serves async trainers.
func (s *Server) GetTask(ctx context.Context, req *api.GetTaskRequest) (*api.GetTaskResponse, error) {
	pass := CurrentPass
	if req.TaskPass != nil {
		pass = int(*req.TaskPass)
	}
	w, err := s.driver.GetTaskPass(ctx, int(req.TrainerId), pass, int(req.FinishedTask), int(req.FailedTask), req.LossSum, req.Records)
	if err != nil && w.Status != api.WorkStatus_WORK_WAIT {
		return nil, s.grpcErr(err)
	}
	r := &api.GetTaskResponse{Status: w.Status, Pass: int32(w.Pass)}
	if w.Status == api.WorkStatus_WORK_READY {
		t := w.Task
		r.Task = &api.Task{Id: int32(t.ID), File: t.File, FirstChunk: int32(t.FirstChunk), Chunks: int32(t.Chunks), Records: int32(t.Records)}
	}
	return r, nil
}

// GetStep serves sync trainers.
func (s *Server) GetStep(ctx context.Context, req *api.GetStepRequest) (*api.GetStepResponse, error) {
	w, err := s.driver.GetStep(ctx, int(req.TrainerId), req.Step, req.Epoch)
	if err != nil && w.Status != api.WorkStatus_WORK_WAIT {
		return nil, s.grpcErr(err)
	}
	r := &api.GetStepResponse{Status: w.Status, Step: w.Step, Pass: int32(w.Pass), Checkpoint: w.Checkpoint, Epoch: w.Epoch, MicroBatch: int32(w.MicroBatch),
		PullWithPush: w.PullWithPush}
	r.Slices, r.NextSlices = apiSlices(w.Slices), apiSlices(w.NextSlices)
	return r, nil
}

func apiSlices(sls []core.Slice) []*api.Slice {
	var out []*api.Slice
	for _, sl := range sls {
		out = append(out, &api.Slice{File: sl.File, Chunk: int32(sl.Chunk), First: int32(sl.First), Count: int32(sl.Count)})
	}
	return out
}

// StepDone records a sync step's report and, if asked, answers with the
// trainer's next work (GetStep's answer): the report is in whatever becomes
// of that, so a next work the master cannot tell is left unset, and the
// trainer asks with GetStep.
func (s *Server) StepDone(ctx context.Context, req *api.StepDoneRequest) (*api.StepDoneResponse, error) {
	if err := s.driver.StepDone(ctx, int(req.TrainerId), int(req.MicroBatch), req.Step, req.Epoch, req.LossSum, req.Records); err != nil {
		return nil, s.grpcErr(err)
	}
	if !req.WantNext {
		return &api.StepDoneResponse{}, nil
	}
	next, err := s.GetStep(ctx, &api.GetStepRequest{TrainerId: req.TrainerId, Step: req.Step + 1, Epoch: req.Epoch})
	if err != nil {
		return &api.StepDoneResponse{}, nil
	}
	return &api.StepDoneResponse{Next: next}, nil
}

func (s *Server) grpcErr(err error) error {
	if fatal := s.driver.Fatal(); fatal != nil {
		// This master is stopping; trainers retry and find its successor.
		return status.Error(codes.Unavailable, fatal.Error())
	}
	return grpcErr(err)
}

// RequestRollback serves a trainer that found the pservers at different steps.
func (s *Server) RequestRollback(ctx context.Context, req *api.RequestRollbackRequest) (*api.RequestRollbackResponse, error) {
	if s.rollback == nil {
		return nil, status.Error(codes.Unimplemented, "rollback is a sync-mode recovery")
	}
	if err := s.rollback(ctx, req.Epoch, req.Reason); err != nil {
		return nil, status.Error(codes.Unavailable, err.Error())
	}
	return &api.RequestRollbackResponse{}, nil
}

func grpcErr(err error) error {
	switch {
	case errors.Is(err, core.ErrBadTrainer), errors.Is(err, core.ErrBadStep):
		return status.Error(codes.InvalidArgument, err.Error())
	case errors.Is(err, ErrTrainersFull):
		return status.Error(codes.ResourceExhausted, err.Error())
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return status.FromContextError(err).Err()
	}
	return status.Error(codes.Unavailable, err.Error())
}
