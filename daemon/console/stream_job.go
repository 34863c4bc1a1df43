package console

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"sync"

	"github.com/gtrain/gtrain/api"
)

// logTail is how many lines of a worker's log its page starts with.
const logTail = 200

// jobCursor is a job page's cursor, advanced by the status poll (passes)
// and the event follower (events) each on its own goroutine. Each advance
// is sent under the same lock, so the ids the page sees never go back.
type jobCursor struct {
	mu  sync.Mutex
	c   cursor
	out *sse
}

// sendHistory sends history entries up to pass next (excluded).
func (j *jobCursor) sendHistory(next int, h []api.PassHistory) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.c.Passes = max(j.c.Passes, next)
	return j.out.send("history", j.c.id(), h)
}

// sendEvents sends the events of evs the page lacks, if any.
func (j *jobCursor) sendEvents(evs []api.Event) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	evs = j.c.newEvents(evs)
	if len(evs) == 0 {
		return nil
	}
	j.c.Events = evs[len(evs)-1].Time.UnixNano()
	return j.out.send("events", j.c.id(), evs)
}

// streamJob is a job page's stream: "status" (the job's status without
// its history and events) when it changes, "history" with the passes the
// page lacks, "events" as they are recorded. History and events carry the
// cursor as their id, so a reconnecting page is sent only what it lacks.
func (c *Console) streamJob(w http.ResponseWriter, r *http.Request) {
	out, s, ok := c.openStream(w, r)
	if !ok {
		return
	}
	job := r.PathValue("job")
	start := parseCursor(r.Header.Get("Last-Event-ID"))
	cur := &jobCursor{c: start, out: out}
	ctx, cancel := context.WithCancel(r.Context())
	var following sync.WaitGroup
	following.Go(func() { c.followEvents(ctx, s, job, cur) })
	defer following.Wait() // nothing writes to w once the handler returns
	defer cancel()
	feed := newHistoryFeed(start)
	sendStatus := changes(out, "status")
	c.poll(ctx, out, func(ctx context.Context) (any, error) {
		return document[api.JobStatus](c.ctl.GetJob(s.outgoing(ctx), &api.GetJobRequest{Name: job}))
	}, func(v any) error {
		st := v.(api.JobStatus)
		if h := feed.update(st.History); len(h) > 0 {
			if err := cur.sendHistory(feed.next, h); err != nil {
				return err
			}
		}
		st.History, st.Events = nil, nil
		return sendStatus(st)
	})
}

// followEvents sends the job's events the page lacks as JobEvents streams
// them, until the job ends or the page goes.
func (c *Console) followEvents(ctx context.Context, s session, job string, cur *jobCursor) {
	stream, err := c.ctl.JobEvents(s.outgoing(ctx), &api.JobEventsRequest{Name: job, Follow: true})
	if err != nil {
		return // the status poll reports the API's problems
	}
	for {
		doc, err := stream.Recv()
		if err != nil {
			if !errors.Is(err, io.EOF) && ctx.Err() == nil {
				c.cfg.Log.Debug("web console: job events ended", "job", job, "err", err)
			}
			return
		}
		var events []api.Event
		if json.Unmarshal(doc.GetJson(), &events) != nil {
			continue
		}
		if cur.sendEvents(events) != nil {
			return
		}
	}
}

// logLines is one piece of a worker's log.
type logLines struct {
	Worker string `json:"worker"`
	Text   string `json:"text"`
}

// streamLog is a worker log page's stream: the last logTail lines, then
// new ones as they are written ("lines"), and "end" when the log ends
// (the job ended and its workers are quiet).
func (c *Console) streamLog(w http.ResponseWriter, r *http.Request) {
	out, s, ok := c.openStream(w, r)
	if !ok {
		return
	}
	ctx, cancel := context.WithCancel(r.Context())
	var pinging sync.WaitGroup
	pinging.Go(func() { c.keepAlive(ctx, out) }) // a quiet worker's log says nothing for long
	defer pinging.Wait()
	defer cancel()
	req := &api.LogsRequest{Job: r.PathValue("job"), Worker: r.PathValue("worker"), Follow: true, Lines: logTail}
	stream, err := c.ctl.Logs(s.outgoing(ctx), req)
	if err != nil {
		_ = out.send("fatal", "", problemOf(err))
		return
	}
	for {
		chunk, err := stream.Recv()
		switch {
		case errors.Is(err, io.EOF):
			_ = out.send("end", "", struct{}{})
			return
		case err != nil:
			if ctx.Err() == nil {
				_ = out.send("fatal", "", problemOf(err))
			}
			return
		case len(chunk.GetData()) > 0:
			if out.send("lines", "", logLines{Worker: chunk.GetWorker(), Text: string(chunk.GetData())}) != nil {
				return
			}
		}
	}
}

// keepAlive pings out while ctx lasts (ping sends only after keepAlive of
// silence).
func (c *Console) keepAlive(ctx context.Context, out *sse) {
	tick := c.cfg.Clock.NewTicker(keepAlive)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C():
			if out.ping() != nil {
				return
			}
		}
	}
}
