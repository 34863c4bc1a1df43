package trainer

import (
	"log/slog"
	"slices"
	"testing"
	"time"

	"github.com/gtrain/gtrain/internal/cpuaffinity"
	"golang.org/x/sys/unix"
)

// TestComputeThreadStaysPinned: a trainer with compute CPUs computes every
// micro-batch on the same thread, pinned to those CPUs from before the
// first to after the last (no move per micro-batch), and its other
// goroutines keep the CPUs they had; stopping it gives the thread back
// its CPUs.
func TestComputeThreadStaysPinned(t *testing.T) {
	all, err := cpuaffinity.Allowed()
	if err != nil {
		t.Fatal(err)
	}
	if len(all) < 2 {
		t.Skipf("this test pins a thread to one CPU of several: the process may run on %v only", all)
	}
	last := all[len(all)-1:]
	tr := &trainer{cfg: Config{ComputeCPUs: last}, log: slog.New(slog.DiscardHandler)}
	stop := tr.startComputeThread()
	type seen struct {
		tid  int
		cpus []int
	}
	var runs []seen
	for range 3 {
		tr.computer.run(func() {
			cpus, err := cpuaffinity.Allowed()
			if err != nil {
				t.Error(err)
			}
			runs = append(runs, seen{unix.Gettid(), cpus})
		})
		if mine, _ := cpuaffinity.Allowed(); !slices.Equal(mine, all) {
			t.Errorf("the goroutine that asked runs on %v; want %v as before", mine, all)
		}
		threads, err := cpuaffinity.ThreadCPUs(unix.Getpid())
		if err != nil {
			t.Fatal(err)
		}
		if between := threads[runs[len(runs)-1].tid]; !slices.Equal(between, last) {
			t.Errorf("between micro-batches the compute thread may run on %v; want %v still", between, last)
		}
	}
	for i, r := range runs {
		if r.tid != runs[0].tid {
			t.Errorf("micro-batch %d computed on thread %d, the first on %d: want one thread", i, r.tid, runs[0].tid)
		}
		if !slices.Equal(r.cpus, last) {
			t.Errorf("micro-batch %d computed on a thread allowed %v; want %v", i, r.cpus, last)
		}
	}
	if !tr.pinnedOK.Load() {
		t.Error("pinnedOK false after computations on the compute CPUs: the gate would still yield")
	}
	stop()
	tid := runs[0].tid
	deadline := time.Now().Add(5 * time.Second)
	for {
		threads, err := cpuaffinity.ThreadCPUs(unix.Getpid())
		if err != nil {
			t.Fatal(err)
		}
		cpus, alive := threads[tid]
		if !alive || slices.Equal(cpus, all) {
			break // given back, or the thread ended with its goroutine
		}
		if time.Now().After(deadline) {
			t.Fatalf("thread %d still allowed %v after stop; want %v", tid, cpus, all)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestNoComputeThreadWithoutCPUs: without compute CPUs, or for a model
// program, micro-batches compute on the calling goroutine.
func TestNoComputeThreadWithoutCPUs(t *testing.T) {
	tr := &trainer{log: slog.New(slog.DiscardHandler)}
	defer tr.startComputeThread()()
	if tr.computer != nil {
		t.Error("a compute thread started without compute CPUs")
	}
}
