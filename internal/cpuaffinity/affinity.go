package cpuaffinity

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// Allowed is the CPUs the calling thread may run on, in increasing order:
// at a process's start, what its parent, taskset or a cpuset left it.
func Allowed() ([]int, error) {
	return threadCPUs(0)
}

func threadCPUs(tid int) ([]int, error) {
	var s unix.CPUSet
	if err := unix.SchedGetaffinity(tid, &s); err != nil {
		return nil, err
	}
	var out []int
	for c := 0; c < len(s)*64; c++ {
		if s.IsSet(c) {
			out = append(out, c)
		}
	}
	return out, nil
}

func setOf(cpus []int) unix.CPUSet {
	var s unix.CPUSet
	for _, c := range cpus {
		s.Set(c)
	}
	return s
}

// Pin locks the calling goroutine to its OS thread and lets that thread run
// on cpus only, until the returned function puts back the CPUs the thread
// had and unlocks it. The goroutine must call both on the same stack (Pin
// then defer). When the system refuses (a cpuset without those CPUs), the
// goroutine runs unpinned and Pin returns the error with a no-op restore.
func Pin(cpus []int) (restore func(), err error) {
	runtime.LockOSThread()
	before, err := threadCPUs(0)
	if err == nil {
		s := setOf(cpus)
		err = unix.SchedSetaffinity(0, &s)
	}
	if err != nil {
		runtime.UnlockOSThread()
		return func() {}, fmt.Errorf("pin a thread to CPUs %s: %w", Format(cpus), err)
	}
	return func() {
		s := setOf(before)
		_ = unix.SchedSetaffinity(0, &s) // the CPUs it just had: refused only if the cpuset shrank, and then the thread keeps cpus
		runtime.UnlockOSThread()
	}, nil
}

// SetProcess lets every thread of process pid run on cpus only, but the
// threads for which keep (when not nil) says true given their CPUs now (a
// trainer's computing threads on its exclusive CPUs). A thread the process
// starts meanwhile takes its creator's CPUs, so the threads are gone over
// until a pass finds none it has not set. A process that exits meanwhile is
// no error.
func SetProcess(pid int, cpus []int, keep func(current []int) bool) error {
	s := setOf(cpus)
	done := map[int]bool{}
	for pass := 0; pass < 5; pass++ {
		tids, err := threads(pid)
		if err != nil {
			if errors.Is(err, os.ErrNotExist) {
				return nil
			}
			return err
		}
		fresh := 0
		for _, tid := range tids {
			if done[tid] {
				continue
			}
			done[tid], fresh = true, fresh+1
			if keep != nil {
				cur, err := threadCPUs(tid)
				if err == nil && keep(cur) {
					continue
				}
			}
			if err := unix.SchedSetaffinity(tid, &s); err != nil && !errors.Is(err, unix.ESRCH) {
				return fmt.Errorf("set the CPUs of thread %d of process %d to %s: %w", tid, pid, Format(cpus), err)
			}
		}
		if fresh == 0 {
			return nil
		}
	}
	return nil
}

// ThreadCPUs is the CPUs each thread of process pid may run on, by thread
// ID (what the tests read).
func ThreadCPUs(pid int) (map[int][]int, error) {
	tids, err := threads(pid)
	if err != nil {
		return nil, err
	}
	out := map[int][]int{}
	for _, tid := range tids {
		if cpus, err := threadCPUs(tid); err == nil {
			out[tid] = cpus
		}
	}
	return out, nil
}

func threads(pid int) ([]int, error) {
	ents, err := os.ReadDir(filepath.Join("/proc", strconv.Itoa(pid), "task"))
	if err != nil {
		return nil, err
	}
	var out []int
	for _, e := range ents {
		if tid, err := strconv.Atoi(e.Name()); err == nil {
			out = append(out, tid)
		}
	}
	return out, nil
}

// Children is the processes whose parent is pid, read from /proc (a
// trainer's model program, a sandbox helper's child).
func Children(pid int) []int {
	var out []int
	tids, _ := threads(pid)
	for _, tid := range tids {
		b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "task", strconv.Itoa(tid), "children"))
		if err != nil {
			continue
		}
		for _, f := range strings.Fields(string(b)) {
			if c, err := strconv.Atoi(f); err == nil && !slices.Contains(out, c) {
				out = append(out, c)
			}
		}
	}
	return out
}

// Format writes cpus as a CPU list: "0,2,3".
func Format(cpus []int) string {
	parts := make([]string, len(cpus))
	for i, c := range cpus {
		parts[i] = strconv.Itoa(c)
	}
	return strings.Join(parts, ",")
}

// Parse reads a list Format wrote ("" is none).
func Parse(s string) ([]int, error) {
	var out []int
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p == "" {
			continue
		}
		c, err := strconv.Atoi(p)
		if err != nil || c < 0 || c >= 1024 {
			return nil, fmt.Errorf("CPU list %q: %q is not a CPU number (0 to 1023)", s, p)
		}
		out = append(out, c)
	}
	return out, nil
}

// Subset reports whether every CPU of a is in b; an empty a is not.
func Subset(a, b []int) bool {
	for _, c := range a {
		if !slices.Contains(b, c) {
			return false
		}
	}
	return len(a) > 0
}
