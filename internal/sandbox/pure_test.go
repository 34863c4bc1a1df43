package sandbox

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// TestPickUIDDeterministicAndCollisions: a job starts at the same uid
// every time; a uid another job holds is skipped to the next, wrapping at
// the end of the range.
func TestPickUIDDeterministicAndCollisions(t *testing.T) {
	held := map[int]string{}
	claim := func(job string) func(int) (bool, error) {
		return func(uid int) (bool, error) {
			if o, ok := held[uid]; ok {
				return o == job, nil
			}
			held[uid] = job
			return true, nil
		}
	}
	a, err := pickUID("alpha", claim("alpha"))
	if err != nil || a != FirstUID+startUID("alpha") {
		t.Fatalf("alpha: %d, %v", a, err)
	}
	if again, _ := pickUID("alpha", claim("alpha")); again != a {
		t.Errorf("alpha again: %d, want %d", again, a)
	}
	held[FirstUID+startUID("beta")] = "other"
	if b, _ := pickUID("beta", claim("beta")); b != FirstUID+(startUID("beta")+1)%(LastUID-FirstUID+1) {
		t.Errorf("beta with its uid taken: %d", b)
	}
	for uid := FirstUID; uid <= LastUID; uid++ {
		if _, ok := held[uid]; !ok {
			held[uid] = "other"
		}
	}
	if _, err := pickUID("gamma", claim("gamma")); err == nil {
		t.Error("a full range gave a uid")
	}
}

// TestClaimUIDFiles: the claim file holds the job; a second claim of the
// same job gets the same uid, another job's the next.
func TestClaimUIDFiles(t *testing.T) {
	dir := t.TempDir()
	a, err := ClaimUID(dir, "job-a")
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, itoa(a))); string(b) != "job-a\n" {
		t.Errorf("claim file: %q", b)
	}
	if again, _ := ClaimUID(dir, "job-a"); again != a {
		t.Errorf("job-a again: %d, want %d", again, a)
	}
	// Another job that hashes elsewhere but finds a's uid on its way.
	if err := os.WriteFile(filepath.Join(dir, itoa(FirstUID+startUID("job-b"))), []byte("job-z\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if b, _ := ClaimUID(dir, "job-b"); b == FirstUID+startUID("job-b") || b < FirstUID || b > LastUID {
		t.Errorf("job-b took a held uid or left the range: %d", b)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

// TestFilterEnv keeps the allow-list only and sets HOME and TMPDIR.
func TestFilterEnv(t *testing.T) {
	got := FilterEnv([]string{"PATH=/bin", "GTRAIN_ETCD_PASSWORD=x", "HOME=/root", "LANG=C.UTF-8",
		"CUDA_VISIBLE_DEVICES=1", "SSH_AUTH_SOCK=/tmp/a", "LD_PRELOAD=/x.so", "bad", "OPENBLAS_CORETYPE=Haswell"}, "/tmp/home")
	want := []string{"PATH=/bin", "LANG=C.UTF-8", "CUDA_VISIBLE_DEVICES=1", "OPENBLAS_CORETYPE=Haswell", "HOME=/tmp/home", "TMPDIR=/tmp/home"}
	if !slices.Equal(got, want) {
		t.Errorf("FilterEnv = %q, want %q", got, want)
	}
	if got := FilterEnv(nil, "/h"); got[0] != "PATH=/usr/local/bin:/usr/bin:/bin" {
		t.Errorf("no PATH: %q", got)
	}
}

// TestLastWins: a name given twice keeps its last value, where that value
// stood; the others keep their order.
func TestLastWins(t *testing.T) {
	got := lastWins([]string{"A=1", "USER=gtrain-1", "B=2", "USER=alice", "A=3", "C="})
	want := []string{"B=2", "USER=alice", "A=3", "C="}
	if !slices.Equal(got, want) {
		t.Errorf("lastWins = %q, want %q", got, want)
	}
}

// TestLimitsFor: the request is the limit; cpu becomes a CFS quota; an
// unstated request gets the default cap (1 CPU, 2 GiB), never none.
func TestLimitsFor(t *testing.T) {
	for _, tc := range []struct {
		cpu  float64
		mem  int64
		want Limits
	}{
		{0, 0, Limits{MemoryBytes: 2 << 30, Pids: DefaultPids, CPUQuotaUs: 100000, CPUPeriodUs: 100000}},
		{1.5, 512 << 20, Limits{MemoryBytes: 512 << 20, Pids: DefaultPids, CPUQuotaUs: 150000, CPUPeriodUs: 100000}},
		{0.001, 0, Limits{MemoryBytes: 2 << 30, Pids: DefaultPids, CPUQuotaUs: 1000, CPUPeriodUs: 100000}},
	} {
		if got := LimitsFor(tc.cpu, tc.mem); got != tc.want {
			t.Errorf("LimitsFor(%v, %v) = %+v, want %+v", tc.cpu, tc.mem, got, tc.want)
		}
	}
}

// TestFindHierarchy prefers a v2 mount with memory and pids, and falls
// back to v1; with neither it names what is missing.
func TestFindHierarchy(t *testing.T) {
	root := t.TempDir()
	mk := func(p, content string) {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(root, p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, p), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := findHierarchy(root); err == nil {
		t.Error("an empty root gave a hierarchy")
	}
	mk("unified/cgroup.controllers", "")
	mk("memory/cgroup.procs", "")
	mk("pids/cgroup.procs", "")
	if h, err := findHierarchy(root); err != nil || h.v2 != "" || h.v1["memory"] == "" || h.v1["cpu"] != "" {
		t.Errorf("hybrid with an empty unified: %+v, %v", h, err)
	}
	mk("unified/cgroup.controllers", "cpu memory pids")
	if h, err := findHierarchy(root); err != nil || h.v2 != filepath.Join(root, "unified") {
		t.Errorf("unified with controllers: %+v, %v", h, err)
	}
}

// TestCreatorGone reads the creating pid from a group's name.
func TestCreatorGone(t *testing.T) {
	if creatorGone(fmt.Sprintf("my-job-%d-3", os.Getpid())) {
		t.Error("this process's group counted as gone")
	}
	for _, name := range []string{"job", "job-x-1", "gtrain"} {
		if creatorGone(name) {
			t.Errorf("%q counted as gone", name)
		}
	}
	cmd := exec.Command("/bin/true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	if !creatorGone(fmt.Sprintf("job-%d-1", cmd.Process.Pid)) {
		t.Error("an exited process's group is not gone")
	}
}

// TestPrepareModes: Unisolated gives no sandbox, Refuse the refusal with
// its reason and what to do.
func TestPrepareModes(t *testing.T) {
	if sb, err := (Policy{}).Prepare(Job{Name: "j"}); sb != nil || err != nil {
		t.Errorf("Unisolated: %v, %v", sb, err)
	}
	_, err := Policy{Mode: Refuse, Reason: "the agent is not root"}.Prepare(Job{Name: "j"})
	if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "the agent is not root") ||
		!strings.Contains(err.Error(), "--allow-unisolated-programs") {
		t.Errorf("Refuse: %v", err)
	}
}

// TestMissingCaps: a non-root agent is judged by its effective
// capabilities, each one of Needed named when absent.
func TestMissingCaps(t *testing.T) {
	var all uint64
	for _, c := range Needed {
		all |= 1 << c.Bit
	}
	if m := missingCaps(all); len(m) != 0 {
		t.Errorf("all the needed capabilities: missing %v", m)
	}
	if m := missingCaps(all &^ (1 << unix.CAP_SYS_ADMIN)); !slices.Equal(m, []string{"CAP_SYS_ADMIN"}) {
		t.Errorf("without CAP_SYS_ADMIN: missing %v", m)
	}
	if m := missingCaps(0); len(m) != len(Needed) {
		t.Errorf("no capabilities: missing %v, want all %d", m, len(Needed))
	}
}

// TestUnitAllowsNamespaces: the shipped systemd unit's RestrictNamespaces=
// allows every namespace the sandbox starts a program in; its seccomp
// filter would refuse the helper's clone otherwise (it did, with "mnt"
// alone, after the PID, IPC and network namespaces came).
func TestUnitAllowsNamespaces(t *testing.T) {
	unit, err := os.ReadFile(filepath.Join("..", "..", "deploy", "systemd", "gtraind.service"))
	if err != nil {
		t.Fatal(err)
	}
	var allowed []string
	for _, line := range strings.Split(string(unit), "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "RestrictNamespaces="); ok {
			allowed = strings.Fields(v)
		}
	}
	if allowed == nil {
		return // no restriction
	}
	names := map[uintptr]string{syscall.CLONE_NEWNS: "mnt", syscall.CLONE_NEWPID: "pid", syscall.CLONE_NEWIPC: "ipc",
		syscall.CLONE_NEWNET: "net", syscall.CLONE_NEWUTS: "uts", syscall.CLONE_NEWUSER: "user", syscall.CLONE_NEWCGROUP: "cgroup"}
	flags := uintptr(cloneFlags | unshareFlags)
	for flag, name := range names {
		if flags&flag != 0 && !slices.Contains(allowed, name) {
			t.Errorf("the unit's RestrictNamespaces=%s lacks %q, a namespace the sandbox starts programs in", strings.Join(allowed, " "), name)
		}
		flags &^= flag
	}
	if flags != 0 {
		t.Errorf("the sandbox uses namespace flags %#x this test cannot name", flags)
	}
}
