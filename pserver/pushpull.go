package pserver

import (
	"time"

	"github.com/gtrain/gtrain/api"
	"github.com/gtrain/gtrain/internal/clock"
)

// pushPullWait bounds how long PushPull waits for its step to be applied
// before it ends without parameters. The master's hint that the step's other
// micro-batches are on their way (api.GetStepResponse.pull_with_push) can be
// wrong (a trainer told to leave, a lost one); then the trainer should soon
// go back to the master, who may give it the missing micro-batch.
const pushPullWait = 250 * time.Millisecond

// PushPull receives one trainer's gradient for one step, like Push, and
// acknowledges it (a first message without data, block -1: the trainer may
// report the micro-batch to the master), then streams the parameters of the
// next step once the step is applied: the pull of a sync trainer's next
// micro-batch rides on its push. A push refused (a stale, future or
// rolled-back step) ends it with Push's status; a step not applied within
// pushPullWait, or a rollback meanwhile, ends it after the acknowledgement.
func (s *Server) PushPull(stream api.PServer_PushPullServer) error {
	_, _, restores := s.shard.Advanced()
	p, step, err := s.receiveAndPush(stream)
	defer p.region.done()
	if err != nil {
		return err
	}
	if err := stream.Send(&api.ParamChunk{Step: step, Block: -1}); err != nil {
		return err
	}
	ctx, cancel := clock.WithTimeout(stream.Context(), s.driver.clock, pushPullWait)
	defer cancel()
	next := &api.PullRequest{MinStep: p.step + 1, Epoch: p.rollbackEpoch}
	if err := s.awaitStep(ctx, next, restores); err != nil {
		return stream.Context().Err() // nil unless the trainer went away
	}
	if p.region != nil {
		return s.sendParamsVia(stream, p.region)
	}
	return s.sendParams(stream)
}

// PushPullRows is PushPull for a micro-batch with embedding rows, whose
// first message carries the rows this pserver owns (PushChunk.rows): every
// push takes a message's rows before its gradient, so the method is
// PushPull's; its name tells a trainer that this pserver does (an older
// one answers it Unimplemented, having taken nothing).
func (s *Server) PushPullRows(stream api.PServer_PushPullRowsServer) error {
	return s.PushPull(stream)
}
