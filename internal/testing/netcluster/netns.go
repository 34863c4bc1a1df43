package netcluster

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"runtime"
	"strings"

	"golang.org/x/sys/unix"
)

// ErrUnavailable means this machine cannot make network namespaces (not
// root, no `ip`, no etcd binary, or a kernel that refuses).
var ErrUnavailable = errors.New("network namespaces unavailable")

// Available says whether a cluster can be made here, and if not, why.
func Available() error {
	if os.Geteuid() != 0 {
		return fmt.Errorf("%w: needs root (CI runs as root)", ErrUnavailable)
	}
	if _, err := exec.LookPath("ip"); err != nil {
		return fmt.Errorf("%w: no `ip` command (apt-get install iproute2)", ErrUnavailable)
	}
	if _, err := exec.LookPath("etcd"); err != nil {
		return fmt.Errorf("%w: no etcd binary (apt-get install etcd-server)", ErrUnavailable)
	}
	probe := "gtprobe-" + randomID()
	if err := ip("netns", "add", probe); err != nil {
		return fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	_ = ip("netns", "del", probe)
	return nil
}

// randomID is 8 hex digits: namespaces of concurrent runs never collide.
func randomID() string {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// ip runs `ip ARGS` and returns its complaint as the error.
func ip(args ...string) error {
	out, err := exec.Command("ip", args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("ip %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}

// inNS is the command prefix that runs a program in namespace ns.
func inNS(ns string) []string { return []string{"ip", "netns", "exec", ns} }

// dialIn dials addr from inside namespace ns: the socket is made on a
// thread moved into the namespace, and stays there once the thread is
// back. A thread that cannot move back is thrown away with its goroutine.
func dialIn(ctx context.Context, ns, network, addr string) (net.Conn, error) {
	type result struct {
		conn net.Conn
		err  error
	}
	done := make(chan result, 1)
	go func() {
		runtime.LockOSThread()
		conn, restored, err := dialOnThread(ctx, ns, network, addr)
		if restored {
			runtime.UnlockOSThread()
		}
		done <- result{conn, err}
	}()
	r := <-done
	return r.conn, r.err
}

// dialOnThread must run on a locked thread.
func dialOnThread(ctx context.Context, ns, network, addr string) (net.Conn, bool, error) {
	own, err := os.Open("/proc/thread-self/ns/net")
	if err != nil {
		return nil, true, err
	}
	defer own.Close()
	target, err := os.Open("/var/run/netns/" + ns)
	if err != nil {
		return nil, true, fmt.Errorf("namespace %s: %w", ns, err)
	}
	defer target.Close()
	if err := unix.Setns(int(target.Fd()), unix.CLONE_NEWNET); err != nil {
		return nil, true, fmt.Errorf("enter namespace %s: %w", ns, err)
	}
	var d net.Dialer
	conn, err := d.DialContext(ctx, network, addr)
	restored := unix.Setns(int(own.Fd()), unix.CLONE_NEWNET) == nil
	return conn, restored, err
}
