package supervisor

import (
	"log/slog"
	"os"
	"os/exec"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/gtrain/gtrain/internal/cpuaffinity"
)

func testCPUManager(pool ...int) *cpuManager {
	return &cpuManager{pool: pool, reserve: 1, log: slog.New(slog.DiscardHandler), given: map[*runner][]int{}}
}

func TestCPUManagerKeepsOneShared(t *testing.T) {
	m := testCPUManager(0, 1, 2, 3)
	a, b, c, d := &runner{job: "a"}, &runner{job: "b"}, &runner{job: "c"}, &runner{job: "d"}
	if got := m.acquire(a, 2, 1); !slices.Equal(got, []int{2, 3}) {
		t.Fatalf("cpu 2 on 4 free CPUs got %v, want the highest two", got)
	}
	if got := m.acquire(b, 0.5, 1); got != nil {
		t.Fatalf("cpu 0.5 got %v: a fraction of a CPU shares", got)
	}
	if got := m.acquire(b, 1.5, 1); got != nil {
		t.Fatalf("cpu 1.5 got %v: only whole CPUs are given", got)
	}
	if got := m.acquire(b, 2, 1); got != nil {
		t.Fatalf("cpu 2 with 2 CPUs left got %v: one must stay shared", got)
	}
	if got := m.acquire(c, 1, 1); !slices.Equal(got, []int{1}) {
		t.Fatalf("cpu 1 with 2 CPUs left got %v, want [1]", got)
	}
	if got := m.acquire(d, 1, 1); got != nil {
		t.Fatalf("cpu 1 with 1 CPU left got %v", got)
	}
	if s := m.sharedLocked(); !slices.Equal(s, []int{0}) {
		t.Fatalf("shared %v, want [0]", s)
	}
	m.release(a)
	if s := m.sharedLocked(); !slices.Equal(s, []int{0, 2, 3}) {
		t.Fatalf("shared after a release %v, want [0 2 3]", s)
	}
	if got := m.acquire(d, 1, 1); !slices.Equal(got, []int{3}) || !slices.Equal(m.exclusive(d), []int{3}) {
		t.Fatalf("cpu 1 after the release got %v", got)
	}
	// A job's trainers on a node get CPUs all, or none.
	m = testCPUManager(0, 1, 2, 3)
	t0, t1, t2 := &runner{job: "j"}, &runner{job: "j"}, &runner{job: "j"}
	if got := m.acquire(t0, 1, 4); got != nil {
		t.Fatalf("4 trainers of cpu 1 on 4 CPUs: trainer 0 got %v, but one CPU stays shared", got)
	}
	if got := m.acquire(t0, 1, 3); !slices.Equal(got, []int{3}) {
		t.Fatalf("3 trainers of cpu 1 on 4 CPUs: trainer 0 got %v", got)
	}
	if got := m.acquire(t1, 1, 3); !slices.Equal(got, []int{2}) {
		t.Fatalf("trainer 1 got %v", got)
	}
	if got := m.acquire(t2, 1, 3); !slices.Equal(got, []int{1}) {
		t.Fatalf("trainer 2 got %v", got)
	}
	var off *cpuManager // --exclusive-cpus not given
	if off.acquire(a, 1, 1) != nil || off.exclusive(a) != nil {
		t.Fatal("a nil manager gave CPUs")
	}
	off.release(a)
	off.apply(nil) // a nil manager returns before asking what runs
}

// TestCPUManagerApply moves real processes: a role without exclusive CPUs
// and its children to the shared CPUs, a trainer with some to the shared
// CPUs but its threads on its own ones (its computation).
func TestCPUManagerApply(t *testing.T) {
	pool, err := cpuaffinity.Allowed()
	if err != nil {
		t.Fatal(err)
	}
	if len(pool) < 2 {
		t.Skipf("moves threads between CPUs: this process may run on %v only", pool)
	}
	m := testCPUManager(pool...)
	// apply moves this process too: give it its CPUs back for the tests after.
	t.Cleanup(func() { _ = cpuaffinity.SetProcess(os.Getpid(), pool, nil) })
	start := func(argv ...string) int {
		cmd := exec.Command(argv[0], argv[1:]...)
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); _ = cmd.Wait() })
		return cmd.Process.Pid
	}
	role, trainer, computing := &runner{}, &runner{}, start("sleep", "30")
	own := m.acquire(trainer, 1, 1)
	if err := cpuaffinity.SetProcess(computing, own, nil); err != nil {
		t.Fatal(err)
	}
	rolePid, trainerPid := start("sh", "-c", "sleep 30 & wait"), start("sleep", "30")
	for i := 0; len(cpuaffinity.Children(rolePid)) == 0 && i < 200; i++ {
		time.Sleep(10 * time.Millisecond)
	}
	m.apply(func() map[*runner]int { return map[*runner]int{role: rolePid, trainer: trainerPid} })
	// The computing thread stands in as a process of its own: a runner
	// whose threads are all on its CPUs keeps them.
	m.apply(func() map[*runner]int { return map[*runner]int{trainer: computing} })
	shared := m.sharedLocked()
	want := map[int][]int{trainerPid: shared, computing: own}
	for _, p := range withDescendants(rolePid) {
		want[p] = shared
	}
	if len(want) < 4 {
		t.Fatalf("the role's child was not found: %v", withDescendants(rolePid))
	}
	for pid, cpus := range want {
		threads, err := cpuaffinity.ThreadCPUs(pid)
		if err != nil {
			t.Fatal(err)
		}
		for tid, got := range threads {
			if !slices.Equal(got, cpus) {
				t.Errorf("thread %d of process %d runs on %v, want %v", tid, pid, got, cpus)
			}
		}
	}
}
