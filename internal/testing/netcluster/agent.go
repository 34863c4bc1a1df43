package netcluster

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/gtrain/gtrain/api"
	"github.com/gtrain/gtrain/internal/testing/wait"
)

// APIPort is the port of every agent's Control API.
const APIPort = "7164"

// Agent is a `gtraind agent` running in a host's namespace.
type Agent struct {
	Host    *Host
	API     string // host:port gctl reaches it at
	DataDir string
	LogPath string

	cmd    *exec.Cmd
	exited chan struct{}
}

// StartAgent starts the agent of h with the cluster's etcd and args (its
// addresses), and waits until the cluster lists its node ready.
func (c *Cluster) StartAgent(h *Host, args ...string) (*Agent, error) {
	a, err := c.LaunchAgent(h, args...)
	if err != nil {
		return nil, err
	}
	if err := c.waitReady(a, 60*time.Second); err != nil {
		return nil, err
	}
	return a, nil
}

// LaunchAgent starts the agent of h like StartAgent, but does not wait
// for it to be ready: for an agent that must be refused (Exited, ExitCode).
func (c *Cluster) LaunchAgent(h *Host, args ...string) (*Agent, error) {
	a := &Agent{Host: h, API: net.JoinHostPort(h.IP, APIPort),
		DataDir: filepath.Join(c.Dir, h.Name, "agent"), LogPath: filepath.Join(c.Dir, h.Name, "agent.log")}
	logFile, err := os.OpenFile(a.LogPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	defer logFile.Close()
	etcdFlags, env := c.AgentEtcdFlags()
	// Each host offers 4 CPUs whatever the machine has: the hosts share its
	// cores, and two of them must hold a job re-placed off a dead third.
	full := append(inNS(h.NS), h.pidNS()...)
	full = append(full, filepath.Join(c.Bin, "gtraind"), "agent", "--node-name", h.Name, "--data-dir", a.DataDir, "--cpu", "4")
	full = append(append(full, etcdFlags...), args...)
	a.cmd = exec.Command(full[0], full[1:]...)
	a.cmd.Env = append(os.Environ(), env...)
	a.cmd.Stdout, a.cmd.Stderr = logFile, logFile
	a.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL} // a killed test leaves nothing
	if err := a.cmd.Start(); err != nil {
		return nil, fmt.Errorf("agent %s: %w", h.Name, err)
	}
	a.exited = make(chan struct{})
	go func() {
		_ = a.cmd.Wait()
		close(a.exited)
	}()
	h.Agent = a
	return a, nil
}

// waitReady polls `gctl node list` from the client namespace.
func (c *Cluster) waitReady(a *Agent, timeout time.Duration) error {
	exited := false
	err := wait.Until(timeout, "agent "+a.Host.Name+" to be ready", func() (bool, string) {
		out, _, code, err := c.Gctl(a.API, "node", "list", "-o", "json")
		var nodes []api.NodeRow
		if err == nil && code == 0 && json.Unmarshal([]byte(out), &nodes) == nil &&
			slices.ContainsFunc(nodes, func(n api.NodeRow) bool { return n.Name == a.Host.Name && n.State == api.NodeReady }) {
			return true, ""
		}
		select {
		case <-a.exited:
			exited = true
			return true, "" // ends the wait: it cannot become ready now
		default:
		}
		return false, fmt.Sprintf("node list: exit %d, %v: %s", code, err, out)
	})
	switch {
	case exited:
		return fmt.Errorf("agent %s exited before it was ready; see %s", a.Host.Name, a.LogPath)
	case err != nil:
		return fmt.Errorf("%w; see %s", err, a.LogPath)
	}
	return nil
}

// Gctl runs bin/gctl --addr addr ARGS in the client namespace; it returns
// stdout, stderr and the exit code (err only when gctl could not run).
func (c *Cluster) Gctl(addr string, args ...string) (string, string, int, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	full := append(inNS(c.clientNS), filepath.Join(c.Bin, "gctl"), "--addr", addr)
	if c.GctlConfig != "" { // a context with TLS files; --addr overrides only its endpoint
		full = append(full, "--config", c.GctlConfig)
	}
	cmd := exec.CommandContext(ctx, full[0], append(full[1:], args...)...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	cmd.Env = append(os.Environ(), "HOME="+c.Dir) // no operator's ~/.gtrain/config.yaml
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		return out.String(), errb.String(), ee.ExitCode(), nil
	}
	return out.String(), errb.String(), 0, err
}

// Crash SIGKILLs the agent and every process of its (its roles) at once,
// as a host that loses power; nothing restarts them.
func (a *Agent) Crash() []int {
	pids := Processes(a.DataDir) // the agent's command line names its data dir too
	if !slices.Contains(pids, a.cmd.Process.Pid) {
		pids = append(pids, a.cmd.Process.Pid)
	}
	for _, pid := range pids {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	<-a.exited
	return pids
}

// Stop sends SIGTERM and waits up to grace, then SIGKILLs.
func (a *Agent) Stop(grace time.Duration) {
	select {
	case <-a.exited:
		return
	default:
	}
	_ = syscall.Kill(a.agentPID(), syscall.SIGTERM)
	select {
	case <-a.exited:
	case <-time.After(grace):
		a.Crash()
	}
}

// Exited is closed when the agent's process has ended.
func (a *Agent) Exited() <-chan struct{} { return a.exited }

// ExitCode is the agent's exit status once Exited is closed (-1 before,
// or when a signal ended it).
func (a *Agent) ExitCode() int {
	select {
	case <-a.exited:
		return a.cmd.ProcessState.ExitCode()
	default:
		return -1
	}
}

// Processes lists the live processes whose command line names dir (an
// agent's roles carry its data dir).
func Processes(dir string) []int {
	var pids []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || !bytes.Contains(cmdline, []byte(dir)) {
			continue
		}
		if stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat")); err == nil && strings.Contains(string(stat), ") Z ") {
			continue // a zombie is dead already
		}
		pids = append(pids, pid)
	}
	return pids
}
