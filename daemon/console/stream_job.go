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
// and the event follower (events) each on its own goroutine.
type jobCursor struct {
	mu sync.Mutex
	c  cursor
}

func (j *jobCursor) advance(passes, events int) string {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.c.Passes = max(j.c.Passes, passes)
	j.c.Events += events
	return j.c.id()
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
	cur := &jobCursor{c: start}
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	go c.followEvents(ctx, out, s, job, start.Events, cur)
	feed := newHistoryFeed(start)
	sendStatus := changes(out, "status")
	c.poll(ctx, out, func(ctx context.Context) (any, error) {
		return document[api.JobStatus](c.ctl.GetJob(s.outgoing(ctx), &api.GetJobRequest{Name: job}))
	}, func(v any) error {
		st := v.(api.JobStatus)
		if h := feed.update(st.History); len(h) > 0 {
			if err := out.send("history", cur.advance(feed.next, 0), h); err != nil {
				return err
			}
		}
		st.History, st.Events = nil, nil
		return sendStatus(st)
	})
}

// followEvents sends the job's events after the first skip (those the
// page has) as JobEvents streams them, until the job ends or the page goes.
func (c *Console) followEvents(ctx context.Context, out *sse, s session, job string, skip int, cur *jobCursor) {
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
		drop := min(skip, len(events))
		events, skip = events[drop:], skip-drop
		if len(events) == 0 {
			continue
		}
		if out.send("events", cur.advance(0, len(events)), events) != nil {
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
	req := &api.LogsRequest{Job: r.PathValue("job"), Worker: r.PathValue("worker"), Follow: true, Lines: logTail}
	stream, err := c.ctl.Logs(s.outgoing(r.Context()), req)
	if err != nil {
		_ = out.send("problem", "", problemOf(err))
		return
	}
	for {
		chunk, err := stream.Recv()
		switch {
		case errors.Is(err, io.EOF):
			_ = out.send("end", "", struct{}{})
			return
		case err != nil:
			if r.Context().Err() == nil {
				_ = out.send("problem", "", problemOf(err))
			}
			return
		case len(chunk.GetData()) > 0:
			if out.send("lines", "", logLines{Worker: chunk.GetWorker(), Text: string(chunk.GetData())}) != nil {
				return
			}
		}
	}
}
