package controlapi

import (
	"context"
	"errors"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/gtrain/gtrain/coord"
)

// readHistory fills snap's per-pass history: the passes finished by the
// progress record's count (entries past it belong to a history a rollback
// voided and are not shown).
func (c *Server) readHistory(ctx context.Context, snap *jobSnapshot) error {
	finished := 0
	if snap.Progress != nil {
		finished = snap.Progress.Pass
	}
	if finished == 0 {
		return nil
	}
	h, err := coord.ReadHistory(ctx, c.cli, snap.Name, finished)
	if errors.Is(err, coord.ErrBadHistory) {
		return status.Errorf(codes.Internal, "job %s: %v", snap.Name, err)
	}
	if err != nil {
		return etcdUnavailable("read history of job "+snap.Name, err)
	}
	snap.history = h
	return nil
}
