package etcdproc

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	"google.golang.org/grpc"

	"github.com/gtrain/gtrain/internal/testing/wait"
)

// ErrNoBinary means Debian's etcd-server is not installed.
var ErrNoBinary = errors.New("the etcd binary is not on PATH (apt-get install etcd-server)")

// readyTimeout bounds the wait for a cluster to elect a leader and serve.
const readyTimeout = 30 * time.Second

// Binary is the path of the etcd binary, or ErrNoBinary.
func Binary() (string, error) {
	p, err := exec.LookPath("etcd")
	if err != nil {
		return "", ErrNoBinary
	}
	return p, nil
}

// Member is one member of a cluster. Fill the exported fields, then Start
// the cluster with StartCluster.
type Member struct {
	Name string
	Host string // the address it binds and advertises
	// ClientPort and PeerPort default to 2379 and 2380.
	ClientPort, PeerPort int
	// Dir holds the member's data; its log goes to Dir + ".log".
	Dir string
	// Prefix runs the binary through another command, e.g.
	// {"ip", "netns", "exec", "ns1"}.
	Prefix []string
	// TLS, when set, serves clients over TLS and asks them for a
	// certificate signed by its CA.
	TLS *PKI
	// Dialer, when set, is how this process reaches the member (one in
	// another network namespace).
	Dialer func(ctx context.Context, addr string) (net.Conn, error)

	cluster string // --initial-cluster
	token   string // --initial-cluster-token, one per cluster
	cmd     *exec.Cmd
	exited  chan struct{}
}

// ClientURL is the URL clients dial.
func (m *Member) ClientURL() string {
	scheme := "http"
	if m.TLS != nil {
		scheme = "https"
	}
	return fmt.Sprintf("%s://%s", scheme, hostPort(m.Host, m.ClientPort, 2379))
}

func (m *Member) peerURL() string {
	return "http://" + hostPort(m.Host, m.PeerPort, 2380)
}

func hostPort(host string, port, def int) string {
	if port == 0 {
		port = def
	}
	return (&url.URL{Host: fmt.Sprintf("%s:%d", host, port)}).Host
}

// StartCluster starts every member as one new cluster and waits until it
// answers through all of them.
func StartCluster(members []*Member) error {
	var peers []string
	for _, m := range members {
		peers = append(peers, m.Name+"="+m.peerURL())
	}
	token := fmt.Sprintf("gtrain-%d-%d", os.Getpid(), time.Now().UnixNano())
	for _, m := range members {
		m.cluster, m.token = strings.Join(peers, ","), token
		if err := m.Start(); err != nil {
			StopAll(members)
			return err
		}
	}
	for _, m := range members {
		if err := m.waitReady(readyTimeout); err != nil {
			StopAll(members)
			return err
		}
	}
	return nil
}

// Start launches the member: the first time as part of a new cluster, later
// again over its data dir (it rejoins the cluster it was in).
func (m *Member) Start() error {
	bin, err := Binary()
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(m.Dir), 0o755); err != nil {
		return fmt.Errorf("etcd member %s: %w", m.Name, err)
	}
	logFile, err := os.OpenFile(m.Dir+".log", os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("etcd member %s: %w", m.Name, err)
	}
	defer logFile.Close()
	args := append(append([]string{}, m.Prefix...), bin)
	args = append(args, m.flags()...)
	m.cmd = exec.Command(args[0], args[1:]...)
	m.cmd.Stdout, m.cmd.Stderr = logFile, logFile
	// Its own process group, so that a Ctrl-C of the test leaves it to
	// Stop, and Pdeathsig, so that a killed test does not leave it behind.
	m.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := m.cmd.Start(); err != nil {
		return fmt.Errorf("etcd member %s: %w", m.Name, err)
	}
	m.exited = make(chan struct{})
	go func(cmd *exec.Cmd, exited chan struct{}) {
		_ = cmd.Wait()
		close(exited)
	}(m.cmd, m.exited)
	return nil
}

// flags is the member's etcd command line.
func (m *Member) flags() []string {
	client := m.ClientURL()
	f := []string{
		"--name", m.Name,
		"--data-dir", m.Dir,
		"--listen-client-urls", client, "--advertise-client-urls", client,
		"--listen-peer-urls", m.peerURL(), "--initial-advertise-peer-urls", m.peerURL(),
		"--initial-cluster", m.cluster, "--initial-cluster-state", "new",
		"--initial-cluster-token", m.token,
		"--logger", "zap", "--log-outputs", "stderr",
		// Quick elections: a killed leader is replaced within a second.
		"--heartbeat-interval", "100", "--election-timeout", "1000",
	}
	if m.TLS != nil {
		f = append(f, "--cert-file", m.TLS.ServerCert, "--key-file", m.TLS.ServerKey,
			"--trusted-ca-file", m.TLS.CACert, "--client-cert-auth",
			"--auth-token", fmt.Sprintf("jwt,pub-key=%s,priv-key=%s,sign-method=ES256,ttl=10m", m.TLS.JWTPub, m.TLS.JWTKey))
	}
	return f
}

// waitReady waits until the member serves a linearizable read.
func (m *Member) waitReady(timeout time.Duration) error {
	cfg := clientv3.Config{Endpoints: []string{m.ClientURL()}, DialTimeout: time.Second, Logger: zap.NewNop()}
	if m.Dialer != nil {
		cfg.DialOptions = []grpc.DialOption{grpc.WithContextDialer(m.Dialer)}
	}
	if m.TLS != nil {
		tlsCfg, err := m.TLS.ClientTLS()
		if err != nil {
			return err
		}
		cfg.TLS = tlsCfg
	}
	cli, err := clientv3.New(cfg)
	if err != nil {
		return fmt.Errorf("etcd member %s: %w", m.Name, err)
	}
	defer cli.Close()
	exited := false
	err = wait.Until(timeout, "etcd member "+m.Name+" to serve", func() (bool, string) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		_, err := cli.Get(ctx, "etcdproc-ready")
		cancel()
		if err == nil || strings.Contains(err.Error(), "user name is empty") {
			return true, "" // serving; with auth on, a read needs a user
		}
		select {
		case <-m.exited:
			exited = true
			return true, "" // ends the wait: it cannot serve now
		default:
		}
		return false, err.Error()
	})
	switch {
	case exited:
		return fmt.Errorf("etcd member %s exited before serving; %s.log ends:\n%s", m.Name, m.Dir, logTail(m.Dir+".log"))
	case err != nil:
		return fmt.Errorf("%w; %s.log ends:\n%s", err, m.Dir, logTail(m.Dir+".log"))
	}
	return nil
}

// Restart starts a stopped member again over its data (it rejoins its
// cluster) and waits until it serves.
func (m *Member) Restart() error {
	if err := m.Start(); err != nil {
		return err
	}
	return m.waitReady(readyTimeout)
}

// PID is the process's id (of the prefix command, which execs etcd).
func (m *Member) PID() int { return m.cmd.Process.Pid }

// Kill SIGKILLs the member and waits for it to die.
func (m *Member) Kill() {
	if m.cmd == nil || m.cmd.Process == nil {
		return
	}
	_ = m.cmd.Process.Kill()
	<-m.exited
}

// Pause stops the member with SIGSTOP: it holds its connections and its
// data but answers nothing, as a hung or partitioned member does.
func (m *Member) Pause() error { return m.cmd.Process.Signal(syscall.SIGSTOP) }

// Resume continues a paused member with SIGCONT.
func (m *Member) Resume() error { return m.cmd.Process.Signal(syscall.SIGCONT) }

// Running reports whether the member's process lives.
func (m *Member) Running() bool {
	if m.exited == nil {
		return false
	}
	select {
	case <-m.exited:
		return false
	default:
		return true
	}
}

// Stop ends the member (SIGTERM, SIGKILL after 5 s).
func (m *Member) Stop() {
	if !m.Running() {
		return
	}
	_ = m.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-m.exited:
	case <-time.After(5 * time.Second):
		m.Kill()
	}
}

// StopAll stops every member.
func StopAll(members []*Member) {
	for _, m := range members {
		m.Stop()
	}
}

// Endpoints are the client URLs of members.
func Endpoints(members []*Member) []string {
	var eps []string
	for _, m := range members {
		eps = append(eps, m.ClientURL())
	}
	return eps
}

// logTail is the end of a member's log, for an error message.
func logTail(path string) string {
	b, _ := os.ReadFile(path)
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	return strings.Join(lines[max(0, len(lines)-5):], "\n")
}
