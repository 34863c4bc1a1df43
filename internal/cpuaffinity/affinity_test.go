package cpuaffinity

import (
	"os/exec"
	"slices"
	"syscall"
	"testing"
	"time"
)

func TestFormatParse(t *testing.T) {
	for _, cpus := range [][]int{nil, {0}, {1, 3, 4}} {
		got, err := Parse(Format(cpus))
		if err != nil || !slices.Equal(got, cpus) {
			t.Errorf("Parse(Format(%v)) = %v, %v", cpus, got, err)
		}
	}
	for _, bad := range []string{"x", "1,-2", "1024", "0-3"} {
		if _, err := Parse(bad); err == nil {
			t.Errorf("Parse(%q) took it", bad)
		}
	}
}

// needTwo returns the test's CPUs, failing where there is only one: these
// tests move threads from one CPU to another.
func needTwo(t *testing.T) []int {
	t.Helper()
	cpus, err := Allowed()
	if err != nil {
		t.Fatal(err)
	}
	if len(cpus) < 2 {
		t.Skipf("this test moves threads between CPUs: the process may run on %v only", cpus)
	}
	return cpus
}

func TestPinAndRestore(t *testing.T) {
	all := needTwo(t)
	last := all[len(all)-1:]
	done := make(chan []int)
	go func() {
		restore, err := Pin(last)
		if err != nil {
			t.Error(err)
		}
		during, _ := threadCPUs(0)
		restore()
		after, _ := threadCPUs(0)
		done <- during
		done <- after
	}()
	if during := <-done; !slices.Equal(during, last) {
		t.Errorf("pinned thread runs on %v, want %v", during, last)
	}
	if after := <-done; !slices.Equal(after, all) {
		t.Errorf("restored thread runs on %v, want %v", after, all)
	}
}

func TestSetProcessKeepsWhatKeepSays(t *testing.T) {
	all := needTwo(t)
	first, last := all[:1], all[len(all)-1:]
	start := func(cpus []int) *exec.Cmd {
		cmd := exec.Command("sleep", "30")
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
		if err := SetProcess(cmd.Process.Pid, cpus, nil); err != nil {
			t.Fatal(err)
		}
		return cmd
	}
	pinned, free := start(last), start(all)
	keep := func(cur []int) bool { return Subset(cur, last) }
	for _, cmd := range []*exec.Cmd{pinned, free} {
		if err := SetProcess(cmd.Process.Pid, first, keep); err != nil {
			t.Fatal(err)
		}
	}
	for cmd, want := range map[*exec.Cmd][]int{pinned: last, free: first} {
		got, err := ThreadCPUs(cmd.Process.Pid)
		if err != nil {
			t.Fatal(err)
		}
		for tid, cpus := range got {
			if !slices.Equal(cpus, want) {
				t.Errorf("thread %d of %v runs on %v, want %v", tid, cmd.Args, cpus, want)
			}
		}
	}
	if err := SetProcess(1<<30, first, nil); err != nil {
		t.Errorf("a process gone is no error: %v", err)
	}
}

func TestChildren(t *testing.T) {
	cmd := exec.Command("sleep", "30")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	if got := Children(cmd.Process.Pid); len(got) != 0 {
		t.Errorf("sleep has children %v", got)
	}
	sh := exec.Command("sh", "-c", "sleep 30 & wait")
	sh.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := sh.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = syscall.Kill(-sh.Process.Pid, syscall.SIGKILL); _ = sh.Wait() }()
	for range 200 {
		if len(Children(sh.Process.Pid)) == 1 {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Errorf("sh's child not found: %v", Children(sh.Process.Pid))
}
