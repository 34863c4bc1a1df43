package daemon

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"syscall"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/gtrain/gtrain/api"
)

// agentEnv makes a re-executed test binary run an agent (Run) with the
// JSON Config it holds, so that a test can SIGKILL a whole node: the agent
// and, through Pdeathsig, its children.
const agentEnv = "GTRAIN_DAEMON_TEST_AGENT"

// testAgentProcess is the agent in the child process. It prints
// "READY <api addr>" once Run is ready and exits 0 when SIGTERM ends it.
func testAgentProcess(raw string) int {
	// The agent's children are test binaries too: they must play roles,
	// not start this agent again (it would find its data dir locked).
	os.Unsetenv(agentEnv)
	var cfg Config
	if err := json.Unmarshal([]byte(raw), &cfg); err != nil {
		fmt.Fprintln(os.Stderr, "test agent: bad config:", err)
		return 2
	}
	if os.Getenv("GTRAIN_TEST_LOG") != "" {
		cfg.Log = slog.New(slog.NewTextHandler(os.Stderr, nil)).With("agent", cfg.NodeName)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	err := Run(ctx, cfg, func(addr string) { fmt.Printf("READY %s\n", addr) })
	if err != nil {
		fmt.Fprintln(os.Stderr, "test agent:", err)
		return 1
	}
	return 0
}

// agentProcess is an agent running in a child process.
type agentProcess struct {
	cfg    Config
	cmd    *exec.Cmd
	addr   string
	client api.ControlClient
	exited chan struct{}
}

// startAgentProcess runs cfg's agent in a child process until the test
// ends (SIGTERM then) or kill is called.
func startAgentProcess(t *testing.T, cfg Config) *agentProcess {
	t.Helper()
	logger := cfg.Log
	cfg.Log = nil
	raw, err := json.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(cfg.Exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), agentEnv+"="+string(raw))
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &agentProcess{cfg: cfg, cmd: cmd, exited: make(chan struct{})}
	p.cfg.Log = logger
	ready := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if addr, ok := strings.CutPrefix(sc.Text(), "READY "); ok {
				ready <- addr
			}
		}
	}()
	go func() {
		_ = cmd.Wait()
		close(p.exited)
	}()
	t.Cleanup(func() { p.stop(t) })
	select {
	case p.addr = <-ready:
	case <-p.exited:
		t.Fatalf("agent process %s exited before it was ready", cfg.NodeName)
	case <-time.After(30 * time.Second):
		t.Fatalf("agent process %s not ready after 30s", cfg.NodeName)
	}
	conn, err := grpc.NewClient(p.addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	p.client = api.NewControlClient(conn)
	return p
}

// kill SIGKILLs the agent; its children die with it (Pdeathsig).
func (p *agentProcess) kill(t *testing.T) {
	t.Helper()
	if err := p.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	<-p.exited
}

func (p *agentProcess) stop(t *testing.T) {
	select {
	case <-p.exited:
		return
	default:
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
	case <-time.After(30 * time.Second):
		_ = p.cmd.Process.Kill()
		t.Errorf("agent process %s did not stop within 30s", p.cfg.NodeName)
	}
}

// nodeStates is `node list` as name -> state.
func nodeStates(t *testing.T, c api.ControlClient) map[string]api.NodeState {
	t.Helper()
	var rows []api.NodeRow
	getDoc(t, "list nodes", func() (*api.Document, error) {
		return c.ListNodes(context.Background(), &api.ListNodesRequest{})
	}, &rows)
	out := map[string]api.NodeState{}
	for _, r := range rows {
		out[r.Name] = r.State
	}
	return out
}

// workerRowsOf is `job workers` as name -> row.
func workerRowsOf(t *testing.T, c api.ControlClient, job string) map[string]api.WorkerRow {
	t.Helper()
	var rows []api.WorkerRow
	getDoc(t, "list workers", func() (*api.Document, error) {
		return c.ListWorkers(context.Background(), &api.GetJobRequest{Name: job})
	}, &rows)
	out := map[string]api.WorkerRow{}
	for _, r := range rows {
		out[r.Name] = r
	}
	return out
}

// jobStatusOf is `job status`.
func jobStatusOf(t *testing.T, c api.ControlClient, job string) api.JobStatus {
	t.Helper()
	var st api.JobStatus
	getDoc(t, "get job", func() (*api.Document, error) {
		return c.GetJob(context.Background(), &api.GetJobRequest{Name: job})
	}, &st)
	return st
}

// withResources sets the spec's resources of a trainer and a pserver.
func withResources(trainerCPU, pserverCPU float64, dir string) func(map[string]any) {
	return func(m map[string]any) {
		if dir != "" {
			withCheckpointDir(dir)(m)
		}
		m["resources"] = map[string]any{
			"trainer": map[string]any{"cpu": trainerCPU, "memory": "16Mi"},
			"pserver": map[string]any{"cpu": pserverCPU, "memory": "16Mi"},
		}
	}
}
