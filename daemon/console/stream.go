package console

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/gtrain/gtrain/api"
	"github.com/gtrain/gtrain/internal/clock"
)

// keepAlive: a stream with nothing to say sends a comment this often, so
// that proxies and browsers do not take a quiet job for a dead connection.
const keepAlive = 15 * time.Second

// sse is one page's server-sent event stream. Sends may come from more
// than one goroutine (a job page polls its status and follows its events).
type sse struct {
	clock clock.Clock
	mu    sync.Mutex
	w     http.ResponseWriter
	f     http.Flusher
	last  time.Time
}

// openStream answers r with an event stream for a logged-in visitor; it
// answers 401 and returns false otherwise (the page's EventSource then
// closes and the page says to reload it, which leads to the login form).
func (c *Console) openStream(w http.ResponseWriter, r *http.Request) (*sse, session, bool) {
	s, ok := c.session(r)
	if !ok {
		http.Error(w, "log in first", http.StatusUnauthorized)
		return nil, s, false
	}
	f, ok := w.(http.Flusher)
	if !ok {
		http.Error(w, "streaming unsupported", http.StatusInternalServerError)
		return nil, s, false
	}
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	f.Flush()
	return &sse{clock: c.cfg.Clock, w: w, f: f, last: c.cfg.Clock.Now()}, s, true
}

// send writes one event whose data is v as JSON; id "" leaves the page's
// last event id as it is.
func (s *sse) send(event, id string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var buf bytes.Buffer
	if id != "" {
		fmt.Fprintf(&buf, "id: %s\n", id)
	}
	fmt.Fprintf(&buf, "event: %s\ndata: %s\n\n", event, b) // JSON has no raw newlines
	if _, err := s.w.Write(buf.Bytes()); err != nil {
		return err
	}
	s.f.Flush()
	s.last = s.clock.Now()
	return nil
}

// ping keeps a quiet stream open.
func (s *sse) ping() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.clock.Since(s.last) < keepAlive {
		return nil
	}
	if _, err := io.WriteString(s.w, ": ping\n\n"); err != nil {
		return err
	}
	s.f.Flush()
	s.last = s.clock.Now()
	return nil
}

// problem is what a page shows when the Control API refuses or fails a
// call: its words, and its code so that the page can send an expired login
// to the form.
type problem struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

func problemOf(err error) problem {
	st := status.Convert(err)
	return problem{Code: st.Code().String(), Message: st.Message()}
}

// fatal reports whether a stream cannot go on after err: the caller is not
// (or no longer) allowed, or the job does not exist.
func fatal(err error) bool {
	switch status.Code(err) {
	case codes.Unauthenticated, codes.PermissionDenied, codes.NotFound, codes.InvalidArgument:
		return true
	}
	return false
}

// poll calls read every Poll until the page goes away or read fails for
// good; it sends what read returns as event when it differs from what it
// sent before, and a problem (once) while the API fails.
func (c *Console) poll(ctx context.Context, out *sse, read func(context.Context) (any, error), onValue func(any) error) {
	tick := c.cfg.Clock.NewTicker(c.cfg.Poll)
	defer tick.Stop()
	failing := false
	for {
		v, err := read(ctx)
		switch {
		case ctx.Err() != nil:
			return
		case err != nil:
			if !failing {
				_ = out.send("problem", "", problemOf(err))
			}
			failing = true
			if fatal(err) {
				// The page closes its stream on "fatal" rather than have
				// EventSource reconnect every few seconds for ever.
				_ = out.send("fatal", "", problemOf(err))
				return
			}
		default:
			if failing {
				_ = out.send("problem", "", problem{})
			}
			failing = false
			if onValue(v) != nil {
				return
			}
		}
		if out.ping() != nil {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C():
		}
	}
}

// changes sends each value as event when its JSON differs from the last.
func changes(out *sse, event string) func(any) error {
	var last []byte
	return func(v any) error {
		b, err := json.Marshal(v)
		if err != nil || bytes.Equal(b, last) {
			return err
		}
		last = b
		return out.send(event, "", json.RawMessage(b))
	}
}

// document decodes a Control API document into a T.
func document[T any](doc *api.Document, err error) (T, error) {
	var v T
	if err != nil {
		return v, err
	}
	if err := json.Unmarshal(doc.GetJson(), &v); err != nil {
		return v, status.Errorf(codes.Internal, "the Control API answered a document the console cannot read: %v", err)
	}
	return v, nil
}

// streamNodes is the cluster page's stream: the node list when it changes.
func (c *Console) streamNodes(w http.ResponseWriter, r *http.Request) {
	out, s, ok := c.openStream(w, r)
	if !ok {
		return
	}
	c.poll(r.Context(), out, func(ctx context.Context) (any, error) {
		return document[[]api.NodeRow](c.ctl.ListNodes(s.outgoing(ctx), &api.ListNodesRequest{}))
	}, changes(out, "nodes"))
}

// streamJobs is the jobs page's stream: the job list when it changes.
func (c *Console) streamJobs(w http.ResponseWriter, r *http.Request) {
	out, s, ok := c.openStream(w, r)
	if !ok {
		return
	}
	c.poll(r.Context(), out, func(ctx context.Context) (any, error) {
		return document[[]api.JobRow](c.ctl.ListJobs(s.outgoing(ctx), &api.ListJobsRequest{}))
	}, changes(out, "jobs"))
}
