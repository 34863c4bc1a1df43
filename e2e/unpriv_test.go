package e2e

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gtrain/gtrain/api"
	"github.com/gtrain/gtrain/internal/sandbox"
	"github.com/gtrain/gtrain/internal/testing/e2erig"
	"github.com/gtrain/gtrain/jobspec"
)

// agentUID is the unprivileged user TestAgentUnprivileged runs the agent
// as: below the sandbox's dynamic range, as a system user such as gtrain is.
const agentUID = 60999

// TestAgentUnprivileged: an agent that runs as a non-root uid with only
// the capabilities of deploy/systemd/gtraind.service (ambient, bounding set
// cut to them, no_new_privs as NoNewPrivileges=yes sets) over a data dir
// and cgroup parents an admin gave it isolates programs: a program job
// trains to the end in the sandbox, its program holding no capability
// and another uid (nocaps.py refuses to serve otherwise), from a workspace
// uploaded with the job (which the agent cannot chown), and a built-in job
// trains too.
func TestAgentUnprivileged(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real processes")
	}
	if os.Geteuid() != 0 {
		t.Skip("needs root to start an agent as another user; SKIPPED, NOT TESTED")
	}
	if err := sandbox.Check(); err != nil {
		t.Skipf("this machine cannot isolate programs: %v; SKIPPED, NOT TESTED", err)
	}
	if _, err := os.Stat("/sys/fs/cgroup/memory/cgroup.procs"); err != nil {
		t.Skip("a non-root agent isolates on cgroup v1 only (v2 moves need the root group); SKIPPED, NOT TESTED")
	}
	work := t.TempDir()
	for _, d := range []string{filepath.Dir(work), work} { // the agent's user must reach it
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	giveCgroups(t, agentUID)
	e2erig.Housing(t, filepath.Join(work, "data"))
	ws := filepath.Join(work, "ws")
	if err := os.Mkdir(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{filepath.Join(e2erig.RepoRoot(), "examples", "program", "gtrainprog.py"),
		filepath.Join(e2erig.RepoRoot(), "examples", "program", "mlp.py"), filepath.Join("testdata", "sandbox", "nocaps.py")} {
		copyFile(t, f, filepath.Join(ws, filepath.Base(f)))
	}
	data := filepath.Join(work, "agent")
	chownTree(t, agentUID, filepath.Join(work, "data"))
	if err := os.Mkdir(data, 0o700); err != nil {
		t.Fatal(err)
	}
	chownTree(t, agentUID, data)
	caps := "+setuid,+setgid,+sys_admin,+kill"
	wrap := []string{"setpriv", "--reuid=" + strconv.Itoa(agentUID), "--regid=" + strconv.Itoa(agentUID), "--clear-groups",
		"--inh-caps=-all," + caps, "--ambient-caps=-all," + caps, "--bounding-set=-all," + caps, "--no-new-privs"}
	a := e2erig.StartAgentWrapped(t, data, wrap)
	if strings.Contains(a.Log.String(), "refuses program jobs") || strings.Contains(a.Log.String(), "UNISOLATED") {
		t.Fatalf("the unprivileged agent does not isolate programs:\n%s", a.Log.String())
	}

	prog := jobspec.Spec{Name: "prog", Mode: jobspec.ModeSync, Trainers: 1, Pservers: 1, Passes: 1, BatchSize: 20, Seed: 1,
		Model: jobspec.ModelSpec{Kind: jobspec.KindProgram, Entry: "/usr/bin/python3 nocaps.py",
			Inputs: 13, Outputs: 1, Hidden: []int{8}, Timeout: "30s"},
		Optimizer: jobspec.OptimizerSpec{Kind: jobspec.OptimizerSGD, LearningRate: 0.01},
		Data:      jobspec.DataSpec{Train: "data/housing-train-*", Test: "data/housing-test-*"},
		Env:       map[string]string{"AGENT_UID": strconv.Itoa(agentUID)},
		Resources: jobspec.ResourcesSpec{Trainer: jobspec.Resource{Memory: "512Mi"}}}
	builtin := e2erig.HousingJob("builtin", "data", 0.01)
	// The program's workspace is uploaded: the agent, which cannot chown
	// the unpacked copy to the job's uid, makes it readable instead.
	for _, sub := range []struct {
		spec  jobspec.Spec
		extra []string
	}{{prog, []string{"--package", ws}}, {builtin, nil}} {
		args := append([]string{"job", "start", "-f", a.WriteSpec(t, sub.spec), "--detach"}, sub.extra...)
		if _, errs, code := a.Gctl(t, args...); code != 0 {
			t.Fatalf("%s: submit exit %d: %s", sub.spec.Name, code, errs)
		}
	}
	for _, name := range []string{"prog", "builtin"} {
		st := e2erig.WaitJob(t, a, name, name+" to end", 120*time.Second, func(st api.JobStatus) bool {
			return st.State == api.StateSucceeded || st.State == api.StateFailed
		})
		if st.State != api.StateSucceeded {
			t.Errorf("%s ended %s: %s", name, st.State, st.Reason)
		}
	}
	a.Stop(t)
}

// giveCgroups does as root what the unit's ExecStartPre does for the
// gtrain user: the programs' parent group of each v1 hierarchy, made and
// given to uid (given back to its owner at the end).
func giveCgroups(t *testing.T, uid int) {
	t.Helper()
	for _, c := range []string{"memory", "pids", "cpu"} {
		if _, err := os.Stat(filepath.Join("/sys/fs/cgroup", c, "cgroup.procs")); err != nil {
			continue
		}
		dir := filepath.Join("/sys/fs/cgroup", c, "gtrain")
		if err := os.Mkdir(dir, 0o755); err != nil && !os.IsExist(err) {
			t.Fatal(err)
		}
		fi, err := os.Stat(dir)
		if err != nil {
			t.Fatal(err)
		}
		st := fi.Sys().(*syscall.Stat_t)
		if err := os.Chown(dir, uid, uid); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = os.Chown(dir, int(st.Uid), int(st.Gid)) })
	}
}

func chownTree(t *testing.T, uid int, dir string) {
	t.Helper()
	err := filepath.Walk(dir, func(p string, _ os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(p, uid, uid)
	})
	if err != nil {
		t.Fatal(err)
	}
}
