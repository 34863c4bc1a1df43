package daemon

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// unixPrefix marks an APIAddr that is a Unix socket, in gRPC's target
// form: "unix:///run/gtrain/api.sock" (gctl --addr takes the same).
const unixPrefix = "unix://"

// apiSocket is the path of a Unix-socket APIAddr; ok is false for HOST:PORT.
func apiSocket(addr string) (path string, ok bool) {
	path, ok = strings.CutPrefix(addr, unixPrefix)
	return path, ok
}

// validateAPISocket checks a Unix-socket APIAddr: an absolute path.
func validateAPISocket(addr string) error {
	path, _ := apiSocket(addr)
	if !filepath.IsAbs(path) {
		return fmt.Errorf("APIAddr (--api-addr) %q: a Unix socket needs an absolute path, e.g. unix:///run/gtrain/api.sock", addr)
	}
	return nil
}

// listenAPI binds the Control API: TCP, or a Unix socket that only the
// agent's user may open (mode 0600: its callers are that user or root, who
// can read the node's keys anyway). The socket is made in a private
// directory and moved into place, so that nobody connects while it is
// still open to all; a socket left by a dead agent is replaced, one that
// answers is not.
func listenAPI(addr string) (net.Listener, error) {
	path, ok := apiSocket(addr)
	if !ok {
		return net.Listen("tcp", addr)
	}
	if c, err := net.DialTimeout("unix", path, time.Second); err == nil {
		c.Close()
		return nil, fmt.Errorf("%s is the socket of a running agent: stop it or give another --api-addr", path)
	}
	dir, err := os.MkdirTemp(filepath.Dir(path), ".gtraind-api-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	tmp := filepath.Join(dir, "api.sock")
	lis, err := net.Listen("unix", tmp)
	if err != nil {
		return nil, err
	}
	lis.(*net.UnixListener).SetUnlinkOnClose(false) // it is unlinked from path below
	if err := os.Chmod(tmp, 0o600); err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		lis.Close()
		return nil, err
	}
	return &socketListener{Listener: lis, path: path}, nil
}

// socketListener unlinks its socket file when closed.
type socketListener struct {
	net.Listener
	path string
}

func (l *socketListener) Close() error {
	err := l.Listener.Close()
	_ = os.Remove(l.path)
	return err
}

// Addr is where clients dial it (the socket's final path).
func (l *socketListener) Addr() net.Addr { return &net.UnixAddr{Name: l.path, Net: "unix"} }
