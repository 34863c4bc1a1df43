package wire

import (
	"context"
	"net"
	"strings"
)

// localSocketBuffer is the kernel buffer of each direction of a local
// socket (pserver.process.listenLocal): a unix socket's default (208 KiB)
// makes each 1 MiB write of gRPC's buffer wait several times for the
// reader, each wait a park and a wake of both processes. The kernel caps it
// at net.core.wmem_max / rmem_max. Measured in trainer_mlp jobs (cpu ms
// per step, 3 runs alternated, 2 pservers together): 8.8-12.5 over TCP,
// 11.2-16.3 over the socket with the default buffer, 6.5-8.7 with this one
// (the trainer's 34-40, against 38-42 over TCP). Within one process
// (BenchmarkPushPullMLP) the large buffer does not pay: there, no process
// waits to be woken.
const localSocketBuffer = 4 << 20

// DialLocal dials a unix socket target ("unix:///path") with
// localSocketBuffer: gRPC's dialer for unix targets, plus the buffer.
func DialLocal(ctx context.Context, target string) (net.Conn, error) {
	path := strings.TrimPrefix(strings.TrimPrefix(target, "unix://"), "unix:")
	c, err := (&net.Dialer{}).DialContext(ctx, "unix", path)
	if err != nil {
		return nil, err
	}
	sizeBuffers(c)
	return c, nil
}

// LocalListener gives each connection lis accepts localSocketBuffer.
func LocalListener(lis net.Listener) net.Listener { return localListener{lis} }

type localListener struct{ net.Listener }

func (l localListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err == nil {
		sizeBuffers(c)
	}
	return c, err
}

// sizeBuffers asks for localSocketBuffer both ways; a kernel that grants
// less still works, as before.
func sizeBuffers(c net.Conn) {
	if u, ok := c.(*net.UnixConn); ok {
		_ = u.SetWriteBuffer(localSocketBuffer)
		_ = u.SetReadBuffer(localSocketBuffer)
	}
}
