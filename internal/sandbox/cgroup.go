package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

const cgroupRoot = "/sys/fs/cgroup"

// hierarchy is where a program's cgroups are made: one directory per v1
// controller, or one v2 directory.
type hierarchy struct {
	v2    string            // the v2 mount with memory and pids, or ""
	v1    map[string]string // controller -> its v1 mount
	group string            // gtrain's parent group inside each
}

// findHierarchy prefers cgroup v2 (at root, or the unified mount of a
// hybrid host) when it offers memory and pids; else the v1 memory and
// pids mounts (cpu when mounted).
func findHierarchy(root string) (hierarchy, error) {
	for _, dir := range []string{root, filepath.Join(root, "unified")} {
		b, err := os.ReadFile(filepath.Join(dir, "cgroup.controllers"))
		if err == nil && hasAll(strings.Fields(string(b)), "memory", "pids") {
			return hierarchy{v2: dir, group: "gtrain"}, nil
		}
	}
	h := hierarchy{v1: map[string]string{}, group: "gtrain"}
	for _, c := range []string{"memory", "pids", "cpu"} {
		if _, err := os.Stat(filepath.Join(root, c, "cgroup.procs")); err == nil {
			h.v1[c] = filepath.Join(root, c)
		}
	}
	if h.v1["memory"] == "" || h.v1["pids"] == "" {
		return hierarchy{}, fmt.Errorf("no cgroup controllers for memory and pids under %s (neither cgroup v2 with them nor v1 memory and pids mounts)", root)
	}
	return h, nil
}

func hasAll(have []string, want ...string) bool {
	for _, w := range want {
		found := false
		for _, h := range have {
			found = found || h == w
		}
		if !found {
			return false
		}
	}
	return true
}

// cgroup is one program's group: a directory per hierarchy.
type cgroup struct {
	dirs []string
	v2   bool
}

// newCgroup makes the group name with limits l, after removing the
// groups of programs whose role died without closing them (a SIGKILLed
// trainer: its program died with it, its group stayed).
func newCgroup(h hierarchy, name string, l Limits) (*cgroup, error) {
	sweepStale(h)
	if h.v2 != "" {
		return newCgroupV2(h, name, l)
	}
	cg := &cgroup{}
	files := map[string][][2]string{
		"memory": {{"memory.limit_in_bytes", limitOr(l.MemoryBytes, "-1")}, {"memory.memsw.limit_in_bytes?", limitOr(l.MemoryBytes, "-1")}, {"memory.swappiness?", "0"}},
		"pids":   {{"pids.max", limitOr(int64(l.Pids), "max")}},
		"cpu":    {{"cpu.cfs_period_us", limitOr(l.CPUPeriodUs, "100000")}, {"cpu.cfs_quota_us", limitOr(l.CPUQuotaUs, "-1")}},
	}
	for _, c := range []string{"memory", "pids", "cpu"} {
		mount := h.v1[c]
		if mount == "" {
			continue
		}
		dir := filepath.Join(mount, h.group, name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			cg.remove()
			return nil, fmt.Errorf("sandbox: cgroup %s: %w", dir, err)
		}
		cg.dirs = append(cg.dirs, dir)
		if err := writeFiles(dir, files[c]); err != nil {
			cg.remove()
			return nil, err
		}
	}
	return cg, nil
}

func newCgroupV2(h hierarchy, name string, l Limits) (*cgroup, error) {
	parent := filepath.Join(h.v2, h.group)
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return nil, fmt.Errorf("sandbox: cgroup %s: %w", parent, err)
	}
	// Controllers reach a group only when its parents delegate them.
	for _, dir := range []string{h.v2, parent} {
		if err := os.WriteFile(filepath.Join(dir, "cgroup.subtree_control"), []byte("+memory +pids +cpu"), 0); err != nil {
			_ = os.WriteFile(filepath.Join(dir, "cgroup.subtree_control"), []byte("+memory +pids"), 0)
		}
	}
	dir := filepath.Join(parent, name)
	if err := os.Mkdir(dir, 0o755); err != nil {
		return nil, fmt.Errorf("sandbox: cgroup %s: %w", dir, err)
	}
	cg := &cgroup{dirs: []string{dir}, v2: true}
	cpu := "max 100000"
	if l.CPUQuotaUs > 0 {
		cpu = fmt.Sprintf("%d %d", l.CPUQuotaUs, l.CPUPeriodUs)
	}
	err := writeFiles(dir, [][2]string{{"memory.max", limitOr(l.MemoryBytes, "max")}, {"memory.swap.max?", "0"},
		{"pids.max", limitOr(int64(l.Pids), "max")}, {"cpu.max?", cpu}})
	if err != nil {
		cg.remove()
		return nil, err
	}
	return cg, nil
}

func limitOr(v int64, none string) string {
	if v <= 0 {
		return none
	}
	return strconv.FormatInt(v, 10)
}

// writeFiles writes each {file, value}; a file named with a trailing "?"
// is optional (the kernel may lack it: swap accounting, cpu on v2).
func writeFiles(dir string, files [][2]string) error {
	for _, f := range files {
		name, optional := strings.CutSuffix(f[0], "?")
		err := os.WriteFile(filepath.Join(dir, name), []byte(f[1]), 0)
		if err != nil && !(optional && (errors.Is(err, os.ErrNotExist) || errors.Is(err, syscall.EINVAL))) {
			return fmt.Errorf("sandbox: cgroup limit %s=%s in %s: %w", name, f[1], dir, err)
		}
	}
	return nil
}

// procsFiles are the files the helper writes its pid into.
func (cg *cgroup) procsFiles() []string {
	var out []string
	for _, d := range cg.dirs {
		out = append(out, filepath.Join(d, "cgroup.procs"))
	}
	return out
}

// oomKilled says whether the kernel killed a process of the group for
// memory.
func (cg *cgroup) oomKilled() bool {
	for _, d := range cg.dirs {
		for _, f := range []string{"memory.events", "memory.oom_control"} {
			b, err := os.ReadFile(filepath.Join(d, f))
			if err != nil {
				continue
			}
			for _, line := range strings.Split(string(b), "\n") {
				if k, v, ok := strings.Cut(line, " "); ok && k == "oom_kill" && v != "0" {
					return true
				}
			}
		}
	}
	return false
}

// remove kills what is left in the group (a process that left the
// program's process group) and removes its directories, waiting up to a
// second for the kernel to let go of the dying processes.
func (cg *cgroup) remove() {
	deadline := time.Now().Add(time.Second)
	for _, d := range cg.dirs {
		for {
			killAll(filepath.Join(d, "cgroup.procs"))
			err := os.Remove(d)
			if err == nil || errors.Is(err, os.ErrNotExist) || time.Now().After(deadline) {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
}

func killAll(procs string) {
	b, _ := os.ReadFile(procs)
	for _, f := range strings.Fields(string(b)) {
		if pid, err := strconv.Atoi(f); err == nil && pid > 1 {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}

// sweepStale removes the groups, named JOB-PID-SEQ, whose creating process
// PID is gone.
func sweepStale(h hierarchy) {
	mounts := []string{h.v2}
	if h.v2 == "" {
		mounts = []string{h.v1["memory"], h.v1["pids"], h.v1["cpu"]}
	}
	for _, m := range mounts {
		if m == "" {
			continue
		}
		entries, _ := os.ReadDir(filepath.Join(m, h.group))
		for _, e := range entries {
			if e.IsDir() && creatorGone(e.Name()) {
				(&cgroup{dirs: []string{filepath.Join(m, h.group, e.Name())}}).remove()
			}
		}
	}
}

// creatorGone says whether the process that named a group JOB-PID-SEQ
// has exited.
func creatorGone(name string) bool {
	parts := strings.Split(name, "-")
	if len(parts) < 3 {
		return false
	}
	pid, err := strconv.Atoi(parts[len(parts)-2])
	if err != nil || pid <= 0 {
		return false
	}
	return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
}

// writableGroups says whether this process can make and fill program
// groups in h: gtrain's parent group of every hierarchy must exist (root
// makes it here) and be writable by it. On cgroup v1 a process may move
// itself into a group whose cgroup.procs it may write, so an admin who
// gives the gtrain user these directories (the unit's ExecStartPre) is
// enough. On v2 moving a process also needs write access to the
// cgroup.procs of the common ancestor of both groups, the root for an
// agent outside gtrain's group: a non-root agent on v2 is refused until
// the agent runs its programs under its own delegated subtree.
func writableGroups(h hierarchy) error {
	mounts := []string{h.v2}
	if h.v2 == "" {
		mounts = nil
		for _, c := range []string{"memory", "pids", "cpu"} {
			if h.v1[c] != "" {
				mounts = append(mounts, h.v1[c])
			}
		}
	}
	for _, m := range mounts {
		dir := filepath.Join(m, h.group)
		if err := os.Mkdir(dir, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
			return fmt.Errorf("cannot make the programs' cgroup parent %s: %w; as root: mkdir %s && chown gtrain:gtrain %s (the unit's ExecStartPre does)", dir, err, dir, dir)
		}
		if err := unix.Access(dir, unix.W_OK|unix.X_OK); err != nil {
			return fmt.Errorf("cannot write the programs' cgroup parent %s (uid %d): %w; as root: chown gtrain:gtrain %s (the unit's ExecStartPre does)", dir, os.Geteuid(), err, dir)
		}
	}
	if h.v2 != "" {
		if err := unix.Access(filepath.Join(h.v2, "cgroup.procs"), unix.W_OK); err != nil {
			return fmt.Errorf("cgroup v2 at %s: a program moves into its group through the root's cgroup.procs, which uid %d cannot write (%v): "+
				"on cgroup v2 run the agent as root for now", h.v2, os.Geteuid(), err)
		}
	}
	return nil
}
