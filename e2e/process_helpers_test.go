package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"github.com/gtrain/gtrain/internal/testing/wait"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// binDir holds gctl and gtraind: $GTRAIN_BIN (make test sets it) or a fresh build.
var binDir string

func TestMain(m *testing.M) {
	flag.Parse()
	idleTestsAtOnce()
	binDir = os.Getenv("GTRAIN_BIN")
	cleanup := func() {}
	if binDir == "" {
		dir, err := os.MkdirTemp("", "gtrain-e2e-bin")
		if err != nil {
			panic(err)
		}
		cleanup = func() { os.RemoveAll(dir) }
		for _, c := range []string{"gctl", "gtraind"} {
			cmd := exec.Command("go", "build", "-o", filepath.Join(dir, c), "./cmd/"+c)
			cmd.Dir = repoRoot()
			if out, err := cmd.CombinedOutput(); err != nil {
				fmt.Fprintf(os.Stderr, "build %s: %v\n%s", c, err, out)
				os.Exit(1)
			}
		}
		binDir = dir
	}
	code := m.Run()
	cleanup()
	os.Exit(code)
}

// idleParallel is how many tests of this package call t.Parallel: those
// whose clusters idle most of their time (TestClusterEtcdOutageFiveMinutes,
// TestClusterEtcdOutage, TestSoak, which pairs with the five-minute idle).
const idleParallel = 3

// idleTestsAtOnce lets every parallel test start at once unless -parallel
// says otherwise. The default (GOMAXPROCS: 2 on the CI machine) would queue
// the third, and in no fixed order: were it the five-minute outage, the
// suite would wait for it after the others instead of during them.
func idleTestsAtOnce() {
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "test.parallel" })
	p := flag.Lookup("test.parallel")
	if n, err := strconv.Atoi(p.Value.String()); !set && err == nil && n < idleParallel {
		_ = p.Value.Set(strconv.Itoa(idleParallel))
	}
}

// agent is a real `gtraind agent --dev` process.
type agent struct {
	cmd     *exec.Cmd
	dataDir string
	api     string
	etcd    string
	log     *bytes.Buffer
	exited  chan error
}

func startAgent(t *testing.T, dataDir string) *agent {
	t.Helper()
	return startAgentWith(t, dataDir)
}

// startAgentWith is startAgent with more agent flags.
func startAgentWith(t *testing.T, dataDir string, flags ...string) *agent {
	t.Helper()
	a := &agent{dataDir: dataDir, api: freePort(t), etcd: freePort(t), log: &bytes.Buffer{}}
	a.launch(t, append([]string{"agent", "--dev", "--data-dir", dataDir,
		"--node-name", "e2e-node", "--api-addr", a.api, "--gossip-addr", freePort(t),
		"--etcd-client-addr", a.etcd, "--etcd-peer-addr", freePort(t)}, flags...)...)
	return a
}

// restartAgent starts a new agent process over the same data dir and ports.
func restartAgent(t *testing.T, old *agent) *agent {
	t.Helper()
	a := &agent{dataDir: old.dataDir, api: old.api, etcd: old.etcd, log: old.log}
	a.launch(t, old.cmd.Args[1:]...)
	return a
}

// launch runs gtraind with args and waits until the agent's node is ready.
func (a *agent) launch(t *testing.T, args ...string) {
	t.Helper()
	a.exited = make(chan error, 1)
	a.cmd = exec.Command(filepath.Join(binDir, "gtraind"), args...)
	a.cmd.Stdout, a.cmd.Stderr = a.log, a.log
	if err := a.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { a.exited <- a.cmd.Wait() }()
	t.Cleanup(func() {
		a.stop(t)
		if t.Failed() {
			t.Logf("agent log:\n%s", a.log.String())
			logs, _ := filepath.Glob(filepath.Join(a.dataDir, "jobs", "*", "log", "*.log"))
			for _, l := range logs {
				b, _ := os.ReadFile(l)
				lines := strings.Split(strings.TrimSpace(string(b)), "\n")
				t.Logf("--- %s (last lines):\n%s", l, strings.Join(lines[max(0, len(lines)-25):], "\n"))
			}
		}
	})
	err := wait.Until(60*time.Second, "the agent to be ready", func() (bool, string) {
		out, _, code := a.gctl(t, "node", "list", "-o", "json")
		if code == 0 && strings.Contains(out, `"ready"`) {
			return true, ""
		}
		select {
		case err := <-a.exited:
			t.Fatalf("agent exited before ready: %v\n%s", err, a.log.String())
		default:
		}
		return false, out
	})
	if err != nil {
		t.Fatalf("%v\n%s", err, a.log.String())
	}
}

// stop sends SIGTERM and requires a clean exit and no process left behind.
func (a *agent) stop(t *testing.T) {
	t.Helper()
	if a.cmd.ProcessState != nil {
		return
	}
	_ = a.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-a.exited:
		if err != nil {
			t.Errorf("agent exit after SIGTERM: %v (want 0)", err)
		}
	case <-time.After(30 * time.Second):
		_ = a.cmd.Process.Kill()
		t.Errorf("agent did not exit 30s after SIGTERM")
	}
	if left := processesUsing(a.dataDir); len(left) > 0 {
		t.Errorf("processes left behind after the agent stopped: %v", left)
		for _, pid := range left {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}

// processesUsing lists live processes whose command line names dataDir.
func processesUsing(dataDir string) []int {
	var pids []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		var pid int
		if _, err := fmt.Sscanf(e.Name(), "%d", &pid); err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil {
			continue
		}
		if stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat")); err == nil && strings.Contains(string(stat), ") Z ") {
			continue // a zombie is already dead
		}
		if strings.Contains(string(b), dataDir) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// gctl runs bin/gctl against the agent and returns stdout, stderr and the exit code.
func (a *agent) gctl(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	return runGctl(t, a.api, args...)
}

func runGctl(t *testing.T, addr string, args ...string) (string, string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(binDir, "gctl"), append([]string{"--addr", addr}, args...)...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	cmd.Env = append(os.Environ(), "HOME="+t.TempDir())
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("gctl %v: %v", args, err)
	}
	return out.String(), errb.String(), code
}

func jsonUnmarshal(s string, v any) error { return json.Unmarshal([]byte(s), v) }
