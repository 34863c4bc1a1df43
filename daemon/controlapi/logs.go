package controlapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strings"

	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/gtrain/gtrain/api"
	"github.com/gtrain/gtrain/coord"
	"github.com/gtrain/gtrain/coord/schema"
	"github.com/gtrain/gtrain/internal/jobdir"
)

// Logs streams the job's worker logs, from whichever node keeps them: this
// node's files, and (unless req.Local) what the other nodes' agents answer
// to the same request with Local set. Lines of every log are merged by the
// time they were written; each file gives its last N lines when asked;
// with follow, new lines come as they are written until the client goes
// away or the job has ended everywhere and its logs have been quiet for a
// while. A worker whose log is kept on a node that is down gets a notice
// line naming the node (with -w, the call fails instead); one not placed
// yet gets a notice with the scheduler's reason.
func (c *Server) Logs(req *api.LogsRequest, stream grpc.ServerStreamingServer[api.LogChunk]) error {
	ctx, cancel := context.WithCancel(stream.Context())
	defer cancel() // ends every source
	job := req.GetJob()
	snap, err := c.readJob(ctx, job)
	if err != nil {
		return err
	}
	if req.GetLines() < 0 {
		return status.Errorf(codes.InvalidArgument, "lines is %d: give 0 (all) or the number of last lines to show", req.GetLines())
	}
	workers := snap.Record.Spec.Workers()
	if w := req.GetWorker(); w != "" {
		if !slices.Contains(workers, w) {
			return status.Errorf(codes.NotFound, "job %s has no worker %s; its workers are: %s", job, w, strings.Join(workers, ", "))
		}
		workers = []string{w}
	}
	var sources []<-chan logEvent
	for _, w := range workers {
		ch := make(chan logEvent, 1)
		tail := &logTail{worker: w, path: jobdir.WorkerLog(c.dataDir, job, w), lines: int(req.GetLines())}
		go c.tailSource(ctx, job, tail, req.GetFollow(), ch)
		sources = append(sources, ch)
	}
	var more <-chan (<-chan logEvent)
	if !req.GetLocal() {
		var remote []<-chan logEvent
		if remote, more, err = c.remoteSources(ctx, snap, req, workers); err != nil {
			return err
		}
		sources = append(sources, remote...)
	}
	merge := newLogMerge(sources, func(worker string, data []byte) error {
		return stream.Send(&api.LogChunk{Worker: worker, Data: data})
	}, nil)
	merge.more = more
	if req.GetLocal() && req.GetFollow() {
		merge.idle = func() error { return stream.Send(&api.LogChunk{CaughtUp: true}) }
		merge.heartbeat = relayHeartbeat
	}
	err = merge.run(ctx)
	if err != nil && stream.Context().Err() != nil {
		return nil // the client went away
	}
	return err
}

// remoteSources relays the request to the agent of every other registered
// node that is not down, and (following) of every node that registers
// later, whose sources come on more. A worker whose newest log is kept on
// a node that is down or gone, or that is not placed, gets a notice (see
// holderNotices).
func (c *Server) remoteSources(ctx context.Context, snap *jobSnapshot, req *api.LogsRequest, workers []string) (
	sources []<-chan logEvent, more <-chan (<-chan logEvent), err error,
) {
	var joins clientv3.WatchChan
	if req.GetFollow() {
		// Watched before the listing, so that no node falls in between.
		joins = c.cli.Watch(clientv3.WithRequireLeader(ctx), coord.NodePrefix(), clientv3.WithPrefix())
	}
	nodes, err := coord.ListJSON[schema.NodeRecord](ctx, c.cli, coord.NodePrefix())
	if err != nil {
		return nil, nil, etcdUnavailable("list nodes", err)
	}
	relayed := map[string]bool{c.node: true}
	held := logHolders(snap, workers)
	for _, n := range nodes {
		if n.State != api.NodeDown && !c.peers.IsDown(n.Name) && !relayed[n.Name] {
			relayed[n.Name] = true
			sources = append(sources, c.startRelay(ctx, n, req, held[n.Name]))
		}
	}
	notices, err := holderNotices(snap, nodes, relayed, req, workers)
	if err != nil {
		return nil, nil, err
	}
	if len(notices) > 0 {
		sources = append([]<-chan logEvent{noticeSource(notices)}, sources...)
	}
	if joins != nil {
		more = c.relayJoining(ctx, joins, req, relayed)
	}
	return sources, more, nil
}

// holderNotices is a notice line for each worker whose log no relayed
// agent can give: one kept on a node that is down or gone (asked for that
// worker alone, an error instead), and one that is not placed, so that has
// no log anywhere yet (a notice even then: following, its log comes once it
// runs on a node that registers).
func holderNotices(snap *jobSnapshot, nodes []schema.NodeRecord, relayed map[string]bool, req *api.LogsRequest, workers []string) ([]logEvent, error) {
	var notices []logEvent
	for _, w := range workers {
		node := holderOf(snap, w)
		var msg string
		switch {
		case node == "":
			msg = notPlacedNotice(snap, w)
		case relayed[node]:
			continue
		default:
			why := "which is down"
			if !slices.ContainsFunc(nodes, func(n schema.NodeRecord) bool { return n.Name == node }) {
				why = "whose agent is not registered (stopped, or its lease ran out)"
			}
			if req.GetWorker() != "" {
				return nil, status.Errorf(codes.Unavailable, "worker %s of job %s: its log is kept on node %s, %s; it can be shown once the node is back",
					w, snap.Name, node, why)
			}
			msg = fmt.Sprintf("the log of %s is kept on node %s, %s: it cannot be shown", w, node, why)
		}
		notices = append(notices, logEvent{worker: w, data: noticeLine(msg)})
	}
	return notices, nil
}

// notPlacedNotice says why a worker that never ran and is not placed has
// no log: the scheduler's reason, as job status shows it (jobSnapshot.reason).
func notPlacedNotice(snap *jobSnapshot, worker string) string {
	reason := ""
	if snap.Placement != nil {
		reason = snap.Placement.Reason
	}
	switch {
	case api.Terminal(snap.State.State) && reason != "":
		return fmt.Sprintf("%s has no log: the job ended before it was placed (%s)", worker, reason)
	case api.Terminal(snap.State.State):
		return fmt.Sprintf("%s has no log: the job ended before it was placed", worker)
	case reason != "":
		return fmt.Sprintf("%s is not placed yet: %s", worker, reason)
	}
	return fmt.Sprintf("%s is not placed yet: waiting for the scheduler to place it", worker)
}

// startRelay starts a relaySource.
func (c *Server) startRelay(ctx context.Context, node schema.NodeRecord, req *api.LogsRequest, held []string) <-chan logEvent {
	ch := make(chan logEvent, 1)
	go c.relaySource(ctx, node, req, held, ch)
	return ch
}

// relayJoining relays the request to each node that registers while the
// stream follows (one that was down or gone when it started included), once.
func (c *Server) relayJoining(ctx context.Context, joins clientv3.WatchChan, req *api.LogsRequest, relayed map[string]bool) <-chan (<-chan logEvent) {
	more := make(chan (<-chan logEvent))
	go func() {
		defer close(more)
		for resp := range joins {
			for _, ev := range resp.Events {
				var n schema.NodeRecord
				if ev.Type != clientv3.EventTypePut || json.Unmarshal(ev.Kv.Value, &n) != nil ||
					relayed[n.Name] || n.State == api.NodeDown {
					continue
				}
				relayed[n.Name] = true
				c.log.Info("following the logs of a node that joined", "job", req.GetJob(), "node", n.Name)
				select {
				case more <- c.startRelay(ctx, n, req, nil):
				case <-ctx.Done():
					return
				}
			}
		}
	}()
	return more
}

// holderOf is the node that keeps worker's newest log: the node its worker
// record names (where it runs, or ran last), else the node it is placed on.
func holderOf(snap *jobSnapshot, worker string) string {
	if rec, ok := snap.Workers[worker]; ok && rec.Node != "" {
		return rec.Node
	}
	return snap.Record.Placement[worker]
}

// logHolders groups workers by holderOf.
func logHolders(snap *jobSnapshot, workers []string) map[string][]string {
	held := map[string][]string{}
	for _, w := range workers {
		if node := holderOf(snap, w); node != "" {
			held[node] = append(held[node], w)
		}
	}
	return held
}

// logTail is how far one worker's log has been sent.
type logTail struct {
	worker string
	path   string
	lines  int // on first read, start this many lines before the end (0 = all)
	offset int64
	opened bool
}

// send emits the log's new whole lines (and, with flushPartial, an
// unfinished last line, terminated) and returns the bytes consumed. A log
// that does not exist (yet) has nothing to send.
func (t *logTail) send(emit func(worker string, data []byte) error, flushPartial bool) (int64, error) {
	f, err := os.Open(t.path)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, status.Errorf(codes.Internal, "open log of %s: %v", t.worker, err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return 0, status.Errorf(codes.Internal, "stat log of %s: %v", t.worker, err)
	}
	if st.Size() < t.offset {
		t.offset = 0 // the job was purged and its name reused
	}
	if !t.opened {
		t.opened = true
		if t.lines > 0 {
			if t.offset, err = tailOffset(f, st.Size(), t.lines); err != nil {
				return 0, status.Errorf(codes.Internal, "read log of %s: %v", t.worker, err)
			}
		}
	}
	if _, err := f.Seek(t.offset, 0); err != nil {
		return 0, status.Errorf(codes.Internal, "seek log of %s: %v", t.worker, err)
	}
	n, err := copyLines(f, func(b []byte) error { return emit(t.worker, b) }, flushPartial)
	t.offset += n
	if err != nil {
		if _, ok := status.FromError(err); ok {
			return n, err
		}
		return n, status.Errorf(codes.Internal, "read log of %s at offset %d: %v", t.worker, t.offset, err)
	}
	return n, nil
}
