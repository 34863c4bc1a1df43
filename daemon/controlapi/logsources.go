package controlapi

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/gtrain/gtrain/api"
	"github.com/gtrain/gtrain/coord/schema"
)

// Timings of a relayed Logs call. A following agent that has nothing new
// says it is caught up every relayHeartbeat, so an agent that has said
// nothing for relayTimeout is lost (or hung): it must not hold the merged
// logs of every other node back forever, nor leave a node's death unsaid.
// Config.RelayTimeout may shorten relayTimeout (tests do).
const (
	relayTimeout   = 10 * time.Second
	relayHeartbeat = 3 * time.Second
)

// sendEvent hands ev to the merge; false when the stream is over.
func sendEvent(ctx context.Context, out chan<- logEvent, ev logEvent) bool {
	select {
	case out <- ev:
		return true
	case <-ctx.Done():
		return false
	}
}

// tailSource hands the merge one worker's log kept on this node: what it
// holds now and, with follow, new lines as they come, until the job has
// ended, its processes here are gone and the log has been quiet for a while.
func (c *Server) tailSource(ctx context.Context, job string, t *logTail, follow bool, out chan<- logEvent) {
	defer close(out)
	emit := func(worker string, data []byte) error {
		if !sendEvent(ctx, out, logEvent{worker: worker, data: data}) {
			return ctx.Err()
		}
		return nil
	}
	fail := func(err error) {
		if ctx.Err() == nil {
			sendEvent(ctx, out, logEvent{err: err})
		}
	}
	if !follow {
		if _, err := t.send(emit, true); err != nil {
			fail(err)
		}
		return
	}
	tick := c.clock.NewTicker(c.logPoll)
	defer tick.Stop()
	lastData, caughtUp := c.clock.Now(), false
	for {
		n, err := t.send(emit, false)
		if err != nil {
			fail(err)
			return
		}
		if n > 0 {
			lastData, caughtUp = c.clock.Now(), false
		}
		if !caughtUp {
			if !sendEvent(ctx, out, logEvent{caughtUp: true}) {
				return
			}
			caughtUp = true
		}
		if c.jobGoneHere(job) && c.clock.Now().Sub(lastData) >= c.logQuiet {
			if _, err := t.send(emit, true); err != nil {
				fail(err)
			}
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C():
		}
	}
}

// jobGoneHere: the job has ended (or its record is gone) and none of its
// processes is left on this node, so its logs here grow no more.
func (c *Server) jobGoneHere(job string) bool {
	v := c.sup.View(job)
	return (!v.Known || api.Terminal(v.State)) && !v.Active
}

// relaySource hands the merge the logs that node's agent keeps of the job
// (req with Local set), already merged by time there. If they cannot be
// fetched, each worker in held (those whose newest log is kept there) gets
// a notice line saying so, and the source ends; the other logs go on.
func (c *Server) relaySource(ctx context.Context, node schema.NodeRecord, req *api.LogsRequest, held []string, out chan<- logEvent) {
	defer close(out)
	err := c.relay(ctx, node, req, out)
	if err == nil || ctx.Err() != nil {
		return
	}
	c.log.Warn("cannot fetch logs from another node", "job", req.GetJob(), "node", node.Name, "api", node.APIAddr, "err", err)
	for _, w := range held {
		msg := fmt.Sprintf("cannot fetch the log of %s kept on node %s (agent %s): %v", w, node.Name, node.APIAddr, err)
		if !sendEvent(ctx, out, logEvent{worker: w, data: noticeLine(msg)}) {
			return
		}
	}
}

// relay streams node's answer to a Local Logs call into out. Every answer
// must come within relayTimeout (the time out spends waiting for the merge
// does not count).
func (c *Server) relay(ctx context.Context, node schema.NodeRecord, req *api.LogsRequest, out chan<- logEvent) error {
	conn, err := grpc.NewClient(node.APIAddr, grpc.WithTransportCredentials(c.dialCreds()))
	if err != nil {
		return err
	}
	defer conn.Close()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var timedOut atomic.Bool
	watchdog := c.clock.AfterFunc(c.relayTimeout, func() { timedOut.Store(true); cancel() })
	defer watchdog.Stop()
	stream, err := api.NewControlClient(conn).Logs(ctx, &api.LogsRequest{
		Job: req.GetJob(), Worker: req.GetWorker(), Follow: req.GetFollow(), Lines: req.GetLines(), Local: true,
	})
	for err == nil {
		var chunk *api.LogChunk
		watchdog.Reset(c.relayTimeout)
		chunk, err = stream.Recv()
		watchdog.Stop()
		if err != nil {
			break
		}
		ev := logEvent{worker: chunk.GetWorker(), data: chunk.GetData(), caughtUp: chunk.GetCaughtUp()}
		if !sendEvent(ctx, out, ev) {
			return ctx.Err()
		}
	}
	switch {
	case errors.Is(err, io.EOF):
		return nil
	case timedOut.Load():
		return fmt.Errorf("no answer for %s", c.relayTimeout)
	}
	return err
}

// noticeSource hands the merge lines known before anything is read.
func noticeSource(lines []logEvent) <-chan logEvent {
	ch := make(chan logEvent, len(lines))
	for _, l := range lines {
		ch <- l
	}
	close(ch)
	return ch
}

// noticeLine is a line the agent adds to a worker's log in a Logs answer.
func noticeLine(msg string) []byte {
	return []byte(agentLinePrefix + msg + " ===\n")
}

// dialCreds is what the log relay dials with; plaintext when unset (tests
// that build a controlServer by hand).
func (c *Server) dialCreds() credentials.TransportCredentials {
	if c.peerCreds == nil {
		return insecure.NewCredentials()
	}
	return c.peerCreds
}
