package bench

import (
	"fmt"
	"io"
	"net"
	"time"

	"golang.org/x/sync/errgroup"
)

// TCPLoopbackMBps is the raw TCP loopback ceiling: streams writer/reader
// pairs at once, total bytes between them in 4 MiB writes. With one stream
// it is the "one writer, one reader" ceiling of
// pserver_pushpull (docs/reference.md#benchmarks); push/pull moves data over
// trainers × pservers connections at once, which on several cores can beat
// one stream, so its ceiling is the best of both.
func TCPLoopbackMBps(total int64, streams int) (float64, error) {
	if streams < 1 {
		return 0, fmt.Errorf("tcp ceiling: streams = %d, want >= 1", streams)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	var g errgroup.Group
	for range streams {
		g.Go(func() error { return drainOne(l) })
	}
	share := total / int64(streams)
	start := time.Now()
	var w errgroup.Group
	for range streams {
		w.Go(func() error { return sendOne(l.Addr().String(), share) })
	}
	if err := w.Wait(); err != nil {
		return 0, err
	}
	if err := g.Wait(); err != nil {
		return 0, err
	}
	return float64(share*int64(streams)) / time.Since(start).Seconds() / 1e6, nil
}

func drainOne(l net.Listener) error {
	c, err := l.Accept()
	if err != nil {
		return err
	}
	defer c.Close()
	_, err = io.Copy(io.Discard, c)
	return err
}

func sendOne(addr string, total int64) error {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		return err
	}
	defer c.Close()
	buf := make([]byte, 4<<20)
	for sent := int64(0); sent < total; sent += int64(len(buf)) {
		if _, err := c.Write(buf); err != nil {
			return fmt.Errorf("tcp write: %w", err)
		}
	}
	return nil
}
