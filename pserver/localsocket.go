package pserver

import (
	"fmt"
	"net"
	"os"
	"path/filepath"

	"github.com/gtrain/gtrain/coord"
	"github.com/gtrain/gtrain/internal/jobdir"
	"github.com/gtrain/gtrain/pserver/client"
	"github.com/gtrain/gtrain/pserver/region"
)

// maxSocketPath bounds a unix socket's path: sun_path holds 108 bytes with
// its terminating NUL on Linux, fewer elsewhere.
const maxSocketPath = 100

// listenLocal opens the unix socket this pserver also serves on, in its
// job's directory, and records it (schema.PserverRecord.Socket) for clients
// of this network host: through it, moving the parameters costs a quarter to
// a third less CPU than through loopback TCP (no TCP stack in the kernel),
// and a trainer moves the whole model twice per step. The socket is only a
// shortcut: without it (a path too long, a file system that refuses
// sockets) clients use Addr, as before, and so this logs and returns nil
// instead of failing the pserver.
//
// It runs after the claim: this process alone serves its index, so a socket
// left by a crashed predecessor at the same path is removed.
func (p *process) listenLocal() net.Listener {
	path := filepath.Join(jobdir.Root(p.cfg.DataDir, p.cfg.Job), fmt.Sprintf("pserver-%d.sock", p.cfg.Index))
	host := coord.NetHostID()
	lis, err := listenUnix(path)
	if err == nil && host == "" {
		lis.Close()
		err = fmt.Errorf("/proc does not name this network host")
	}
	if err != nil {
		p.log.Info("serving on TCP alone: no local socket", "err", err)
		return nil
	}
	p.record.Socket, p.record.SocketHost = path, host
	return lis
}

// serveRegions takes the shared-memory regions of trainers of this host
// (pserver/region) on a socket beside the local one, and returns them (nil
// when there is no local socket, or no socket for regions: trainers then
// move their tensors through the local socket, as before).
func (p *process) serveRegions() *region.Registry {
	if p.record.Socket == "" {
		return nil
	}
	lis, err := listenUnix(region.SocketPath(p.record.Socket))
	if err != nil {
		p.log.Info("no shared-memory regions: trainers of this host push through the local socket", "err", err)
		return nil
	}
	_, floats := client.RegionOffsets(p.shard.Blocks())
	reg := region.NewRegistry(floats, p.log)
	go reg.Serve(lis)
	p.stopRegions = func() {
		lis.Close()
		reg.Close() // a region a stream still holds is unmapped as it ends
	}
	return reg
}

// listenUnix listens on a unix socket at path, which only this user may
// connect to (connecting needs write permission on the socket file); the
// gRPC server's credentials and job guard apply on it as on TCP.
func listenUnix(path string) (net.Listener, error) {
	if len(path) > maxSocketPath {
		return nil, fmt.Errorf("socket path %s: %d bytes, over %d", path, len(path), maxSocketPath)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, err
	}
	if err := os.Remove(path); err != nil && !os.IsNotExist(err) {
		return nil, fmt.Errorf("remove the stale socket: %w", err)
	}
	lis, err := net.Listen("unix", path)
	if err != nil {
		return nil, err
	}
	if err := os.Chmod(path, 0o600); err != nil {
		lis.Close()
		return nil, err
	}
	return lis, nil
}
