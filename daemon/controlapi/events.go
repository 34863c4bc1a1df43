package controlapi

import (
	"context"
	"time"

	"github.com/gtrain/gtrain/api"
	"github.com/gtrain/gtrain/coord"
)

// eventsEndGrace is how long `job events -f` goes on after its job ended:
// the agents and the master record the end's own events ("trainer-0
// exited", ...) just after the state changes.
const eventsEndGrace = 2 * time.Second

// eventsRetry is the pause before re-reading after a broken watch.
const eventsRetry = 500 * time.Millisecond

// JobEvents streams the job's events, oldest first; with follow, new ones as
// they are recorded until the job has ended (and eventsEndGrace more) or the
// caller goes away.
func (c *Server) JobEvents(req *api.JobEventsRequest, stream api.Control_JobEventsServer) error {
	ctx := stream.Context()
	name := req.GetName()
	if _, err := c.readJob(ctx, name); err != nil {
		return err
	}
	var ended <-chan struct{}
	if req.GetFollow() {
		ended = coord.WatchJobEnd(ctx, c.cli, name) // before the read: no end is missed
	}
	f := eventFollower{c: c, job: name, stream: stream}
	rev, err := f.catchUp(ctx)
	if err != nil || !req.GetFollow() {
		return err
	}
	return f.follow(ctx, rev, ended)
}

// eventFollower sends one job's events to one caller, each once.
type eventFollower struct {
	c      *Server
	job    string
	stream api.Control_JobEventsServer
	last   string // key of the newest event sent
}

// catchUp sends the events after the last one sent and returns the
// revision to watch from.
func (f *eventFollower) catchUp(ctx context.Context) (int64, error) {
	events, rev, err := coord.EventsAfter(ctx, f.c.cli, f.job, f.last)
	if err != nil {
		return 0, etcdUnavailable("read events of job "+f.job, err)
	}
	return rev + 1, f.send(events)
}

func (f *eventFollower) send(events []coord.KeyedEvent) error {
	out := make([]api.Event, 0, len(events))
	for _, e := range events {
		if e.Key <= f.last {
			continue // a watch replaying what a read already sent
		}
		out = append(out, e.Event)
		f.last = e.Key
	}
	if len(out) == 0 {
		return nil
	}
	doc, err := document(out)
	if err != nil {
		return err
	}
	return f.stream.Send(doc)
}

// follow sends new events from rev on until the job has ended (closed
// ended) and eventsEndGrace passed, re-reading whenever the watch breaks.
func (f *eventFollower) follow(ctx context.Context, rev int64, ended <-chan struct{}) error {
	var grace <-chan time.Time
	for {
		wctx, cancel := context.WithCancel(ctx)
		batches := coord.WatchEvents(wctx, f.c.cli, f.job, rev)
		broken := false
		for !broken {
			select {
			case <-ctx.Done():
				cancel()
				return nil
			case <-ended:
				ended, grace = nil, f.c.clock.After(eventsEndGrace)
			case <-grace:
				cancel()
				return nil
			case b, ok := <-batches:
				if !ok || b.Err != nil {
					broken = true
					break
				}
				if err := f.send(b.Events); err != nil {
					cancel()
					return err
				}
			}
		}
		cancel()
		select {
		case <-ctx.Done():
			return nil
		case <-f.c.clock.After(eventsRetry):
		}
		var err error
		if rev, err = f.catchUp(ctx); err != nil {
			return err
		}
	}
}
