package daemon

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/gtrain/gtrain/api"
	"github.com/gtrain/gtrain/coord"
	"github.com/gtrain/gtrain/internal/jobdir"
)

// Logs streams the job's worker logs kept on this node: whole lines only,
// each worker's log in spec.Workers() order, the last N lines of each when
// asked, then (with follow) new lines as they come, until the client goes
// away or the job has ended, its processes here are gone and the logs have
// been quiet for a while.
func (c *controlServer) Logs(req *api.LogsRequest, stream grpc.ServerStreamingServer[api.LogChunk]) error {
	ctx := stream.Context()
	job := req.GetJob()
	snap, err := c.readJob(ctx, job)
	if err != nil {
		return err
	}
	if req.GetLines() < 0 {
		return status.Errorf(codes.InvalidArgument, "lines is %d: give 0 (all) or the number of last lines to show", req.GetLines())
	}
	workers := snap.record.Spec.Workers()
	if w := req.GetWorker(); w != "" {
		if !slices.Contains(workers, w) {
			return status.Errorf(codes.NotFound, "job %s has no worker %s; its workers are: %s", job, w, strings.Join(workers, ", "))
		}
		if err := c.checkLogHere(ctx, snap, w); err != nil {
			return err
		}
		workers = []string{w}
	}
	emit := func(worker string, data []byte) error {
		return stream.Send(&api.LogChunk{Worker: worker, Data: data})
	}
	follow := req.GetFollow()
	tails := make([]*logTail, len(workers))
	for i, w := range workers {
		tails[i] = &logTail{worker: w, path: jobdir.WorkerLog(c.dataDir, job, w), lines: int(req.GetLines())}
		if _, err := tails[i].send(emit, !follow); err != nil {
			return err
		}
	}
	if !follow {
		return nil
	}
	tick := time.NewTicker(c.logPoll)
	defer tick.Stop()
	lastData := c.now()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
		for _, t := range tails {
			n, err := t.send(emit, false)
			if err != nil {
				return err
			}
			if n > 0 {
				lastData = c.now()
			}
		}
		v := c.sup.view(job)
		ended := !v.known || api.Terminal(v.state)
		if ended && !v.active && c.now().Sub(lastData) >= c.logQuiet {
			for _, t := range tails {
				if _, err := t.send(emit, true); err != nil {
					return err
				}
			}
			return nil
		}
	}
}

// checkLogHere refuses a worker that runs on another node and has left no
// log here, pointing at the agent that has it.
func (c *controlServer) checkLogHere(ctx context.Context, snap *jobSnapshot, worker string) error {
	node := snap.record.Placement[worker]
	if node == "" || node == c.node {
		return nil
	}
	if _, err := os.Stat(jobdir.WorkerLog(c.dataDir, snap.name, worker)); err == nil {
		return nil
	}
	where := "that node's agent"
	var rec coord.NodeRecord
	if _, err := coord.GetJSON(ctx, c.cli, coord.NodeKey(node), &rec); err == nil && rec.APIAddr != "" {
		where = fmt.Sprintf("gctl --addr %s job logs %s -w %s", rec.APIAddr, snap.name, worker)
	}
	return status.Errorf(codes.FailedPrecondition, "worker %s of job %s runs on node %s and its log is kept there; ask %s",
		worker, snap.name, node, where)
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
