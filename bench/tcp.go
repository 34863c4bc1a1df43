package bench

import (
	"fmt"
	"io"
	"net"
	"time"
)

// TCPLoopbackMBps is the raw TCP loopback ceiling: one writer, one reader,
// total bytes in 4 MiB writes.
func TCPLoopbackMBps(total int64) (float64, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	done := make(chan error, 1)
	go func() {
		c, err := l.Accept()
		if err != nil {
			done <- err
			return
		}
		defer c.Close()
		_, err = io.Copy(io.Discard, c)
		done <- err
	}()
	c, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		return 0, err
	}
	buf := make([]byte, 4<<20)
	start := time.Now()
	for sent := int64(0); sent < total; sent += int64(len(buf)) {
		if _, err := c.Write(buf); err != nil {
			return 0, fmt.Errorf("tcp write: %w", err)
		}
	}
	c.Close()
	if err := <-done; err != nil {
		return 0, err
	}
	return float64(total) / time.Since(start).Seconds() / 1e6, nil
}
