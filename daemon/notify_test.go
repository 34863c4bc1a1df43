package daemon

import (
	"net"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/gtrain/gtrain/daemon/supervisor"
	"github.com/gtrain/gtrain/internal/clock"
)

// fakeSystemd is a NOTIFY_SOCKET: a unixgram socket that collects what the
// agent tells systemd.
type fakeSystemd struct {
	conn *net.UnixConn
	got  chan string
}

// listenNotify sets NOTIFY_SOCKET (and a watchdog of watchdog, if not 0)
// for this process, as systemd does for a Type=notify service.
func listenNotify(t *testing.T, watchdog time.Duration) *fakeSystemd {
	t.Helper()
	dir, err := os.MkdirTemp("", "sd") // a socket path must be short
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	path := filepath.Join(dir, "notify")
	conn, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: path, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	t.Setenv("NOTIFY_SOCKET", path)
	if watchdog > 0 {
		t.Setenv("WATCHDOG_USEC", strconv.FormatInt(watchdog.Microseconds(), 10))
		t.Setenv("WATCHDOG_PID", strconv.Itoa(os.Getpid()))
	}
	s := &fakeSystemd{conn: conn, got: make(chan string, 1000)}
	go func() {
		buf := make([]byte, 4096)
		for {
			n, err := conn.Read(buf)
			if err != nil {
				close(s.got)
				return
			}
			s.got <- string(buf[:n])
		}
	}()
	return s
}

// next is the next message, or "" after timeout.
func (s *fakeSystemd) next(timeout time.Duration) string {
	select {
	case m := <-s.got:
		return m
	case <-time.After(timeout):
		return ""
	}
}

// The agent says READY=1 once it serves, feeds the watchdog at half its
// interval, and says STOPPING=1 when it stops.
func TestSystemdNotify(t *testing.T) {
	sd := listenNotify(t, 400*time.Millisecond)
	a := startAgent(t, testConfig(t, "sd", startEtcd(t)))
	if m := sd.next(5 * time.Second); m != "READY=1" {
		t.Fatalf("first message %q, want READY=1", m)
	}
	start := time.Now()
	for i := range 4 {
		if m := sd.next(time.Second); m != "WATCHDOG=1" {
			t.Fatalf("message %d after READY=1: %q, want WATCHDOG=1", i, m)
		}
	}
	// Four pings at 200 ms: about 800 ms; far more means a slow feeder.
	if d := time.Since(start); d < 500*time.Millisecond || d > 1500*time.Millisecond {
		t.Errorf("four watchdog pings took %s, want about 800ms (half of WatchdogSec=400ms each)", d)
	}
	a.stop(t)
	for {
		m := sd.next(5 * time.Second)
		if m == "STOPPING=1" {
			return
		}
		if m != "WATCHDOG=1" {
			t.Fatalf("after stop: %q, want STOPPING=1", m)
		}
	}
}

// A supervisor that does not answer (a deadlock) stops the pings; they
// resume when it answers again.
func TestWatchdogStarvesWhileSupervisorHangs(t *testing.T) {
	sd := listenNotify(t, 0)
	cfg, err := testConfig(t, "hang", "http://127.0.0.1:1").withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	notify := newNotifier(cfg.Log)
	sup := supervisor.New(nil, cfg.supervisorConfig(nil), clock.System{})
	var hang sync.Mutex // held: the supervisor hangs
	healthy := healthCheck(50*time.Millisecond, func() { hang.Lock(); sup.Responsive(); hang.Unlock() })

	hang.Lock()
	for range 3 {
		notify.feed(healthy)
	}
	if m := sd.next(200 * time.Millisecond); m != "" {
		t.Errorf("a hung supervisor still fed the watchdog: %q", m)
	}
	hang.Unlock()
	notify.feed(healthy)
	if m := sd.next(time.Second); m != "WATCHDOG=1" {
		t.Errorf("after the supervisor answered again: %q, want WATCHDOG=1", m)
	}
}
