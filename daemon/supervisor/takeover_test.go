package supervisor

import (
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/gtrain/gtrain/coord"
	"github.com/gtrain/gtrain/internal/testing/wait"
)

// A role left alive by a previous agent is killed only if its PID still
// runs that very role.
func TestTakeOver(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	launch := roleLaunch{etcd: coord.EtcdConfig{Endpoints: []string{"http://127.0.0.1:1"}}, dataDir: t.TempDir(), node: "n1"}
	args, err := launch.args("sleep-take", "trainer-0", 1)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, args...)
	cmd.Env = append(os.Environ(), childEnv+"=1")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	pid := cmd.Process.Pid
	wait.Eventually(t, 10*time.Second, "the child to show its role in /proc", func() (bool, string) {
		return runsRole(pid, "sleep-take", "trainer-0"), "the child does not show its role in /proc"
	})

	takeOver(pid, "sleep-take", "trainer-1", testLog(t)) // another worker: left alone
	takeOver(pid, "other-job", "trainer-0", testLog(t))  // another job: left alone
	select {
	case err := <-exited:
		t.Fatalf("a process of another worker was killed: %v", err)
	case <-time.After(100 * time.Millisecond):
	}

	takeOver(pid, "sleep-take", "trainer-0", testLog(t))
	select {
	case <-exited:
		if ws := cmd.ProcessState.Sys().(syscall.WaitStatus); !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
			t.Errorf("taken-over process ended with %s, want SIGKILL", cmd.ProcessState)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the previous process of the worker survived the take-over")
	}
}
