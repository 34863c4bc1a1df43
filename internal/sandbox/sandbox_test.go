package sandbox

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// TestMain lets the test binary be the helper, as gtraind is.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == HelperArg {
		HelperMain(os.Args[2:])
	}
	os.Exit(m.Run())
}

// run starts argv in a sandbox of job with limits l over a fresh
// workspace and data dir, and returns its output and exit error.
// Every "DATA" in a word of argv is the data dir's path.
func run(t *testing.T, job string, l Limits, argv ...string) (string, error) {
	t.Helper()
	return runVia(t, "", []string{"JOBVAR=1"}, job, l, argv...)
}

// helperUmask, when not -1, is the umask the helper starts with in runVia
// (an agent under systemd's UMask=0077).
var helperUmask = -1

// runVia is run with helper as the policy's helper ("": this test
// binary) and extra as the job's env.
func runVia(t *testing.T, helper string, extra []string, job string, l Limits, argv ...string) (string, error) {
	t.Helper()
	if err := Check(); err != nil {
		t.Skipf("cannot isolate here: %v (NOT TESTED)", err)
	}
	dir := t.TempDir()
	data, ws := filepath.Join(dir, "data"), filepath.Join(dir, "ws")
	for _, d := range []string{filepath.Join(data, "keys"), ws} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(data, "keys", "node.key"), []byte("secret"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ws, "in.txt"), []byte("workspace file"), 0o644); err != nil {
		t.Fatal(err)
	}
	sb, err := Policy{Mode: Isolate, DataDir: data, Helper: helper}.Prepare(Job{Name: job, Owner: JobOwner(job, 1), Limits: l})
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close()
	t.Setenv("GTRAIN_ETCD_PASSWORD", "hunter2")
	if sb.UID != FirstUID+startUID(JobOwner(job, 1)) {
		t.Fatalf("uid %d", sb.UID)
	}
	for i := range argv {
		argv[i] = strings.ReplaceAll(argv[i], "DATA", data)
	}
	cmd, err := sb.Command(argv, ws, os.Environ(), extra, nil)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if helperUmask >= 0 { // the helper inherits it; the test's files above do not
		defer syscall.Umask(syscall.Umask(helperUmask))
	}
	err = cmd.Run()
	if sb.OOMKilled() {
		err = errors.Join(err, errors.New("oom"))
	}
	return out.String(), err
}

// TestSandboxConfines: the program runs as the job's uid with
// no_new_privs, sees the workspace read-only and not the data dir, keeps
// only the allow-listed environment, and cannot read /etc/shadow. Its uid
// has a name (passwd, group, USER, LOGNAME) that it cannot change.
func TestSandboxConfines(t *testing.T) {
	script := `echo uid=$(id -u) gid=$(id -g) groups=$(id -G); grep NoNewPrivs /proc/self/status; cat in.txt; echo
cat /etc/shadow >/dev/null 2>&1 && echo SHADOW-READ
cat DATA/keys/node.key 2>/dev/null && echo KEY-READ
echo x > in.txt 2>/dev/null && echo WS-WRITTEN
echo x > /dev/shm/gtrain-sandbox-test 2>/dev/null
echo x > /etc/gtrain-sandbox-test 2>/dev/null && echo ETC-WRITTEN
echo x > $HOME/f && echo HOME-WRITTEN
env | grep -q GTRAIN_ETCD_PASSWORD && echo PASSWORD-SEEN
env | grep -q JOBVAR=1 && echo JOBVAR
echo user=$(id -un) group=$(id -gn) USER=$USER LOGNAME=$LOGNAME home=$(getent passwd $(id -u) | cut -d: -f6)
env -u USER -u LOGNAME python3 -c 'import getpass; print("getuser=" + getpass.getuser())'
grep -q '^root:' /etc/passwd && echo HOST-USERS
echo x >> /etc/passwd 2>/dev/null && echo PASSWD-WRITTEN
true`
	// The job's env names LOGNAME, and the extra env an empty
	// CUDA_VISIBLE_DEVICES where the agent's has one: their values replace
	// the earlier ones for Python too, which reads the first of two. The
	// agent runs with UMask=0077 under systemd: the named passwd is still
	// readable.
	t.Setenv("CUDA_VISIBLE_DEVICES", "0")
	helperUmask = 0o077
	out, err := runVia(t, "", []string{"JOBVAR=1", "LOGNAME=job-login", "CUDA_VISIBLE_DEVICES="}, "confine", LimitsFor(1, 64<<20), "/bin/sh", "-c", script)
	helperUmask = -1
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	t.Log(out)
	uid := FirstUID + startUID(JobOwner("confine", 1))
	// The uid has a name (PyTorch 2 looks it up with getpass.getuser(),
	// which falls back to the passwd file without USER and LOGNAME).
	name := ProgramUser(uid)
	named := fmt.Sprintf("user=%s group=%s USER=%s LOGNAME=job-login home=%s", name, name, name, HomeDir)
	for _, want := range []string{fmt.Sprintf("uid=%d gid=%d groups=%d", uid, uid, uid), "NoNewPrivs:\t1",
		"workspace file", "HOME-WRITTEN", "JOBVAR", named, "getuser=" + name, "HOST-USERS"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	// Python reads the first of two values of a name (a shell re-exports
	// its last one): the program itself must see one.
	out, err = runVia(t, "", []string{"LOGNAME=job-login", "CUDA_VISIBLE_DEVICES="}, "confine", LimitsFor(1, 64<<20), "/usr/bin/python3", "-c",
		`import os; print("py: LOGNAME=%s cuda=[%s]" % (os.environ["LOGNAME"], os.environ["CUDA_VISIBLE_DEVICES"]))`)
	if err != nil || !strings.Contains(out, "py: LOGNAME=job-login cuda=[]") {
		t.Errorf("the job's LOGNAME and the empty CUDA_VISIBLE_DEVICES after the sandbox's and the agent's: %v, %s", err, out)
	}
	if _, err := os.Stat("/dev/shm/gtrain-sandbox-test"); err == nil {
		t.Error("the program wrote into the host's /dev/shm")
	}
	for _, bad := range []string{"SHADOW-READ", "KEY-READ", "secret", "WS-WRITTEN", "ETC-WRITTEN", "PASSWORD-SEEN", "PASSWD-WRITTEN"} {
		if strings.Contains(out, bad) {
			t.Errorf("sandbox let through %s:\n%s", bad, out)
		}
	}
}

// TestSandboxLimits: a fork bomb stops at pids.max and an allocation past
// the memory limit is killed by the kernel, which OOMKilled reports.
func TestSandboxLimits(t *testing.T) {
	out, err := run(t, "forks", Limits{Pids: 20}, "/bin/sh", "-c",
		`n=0; while [ $n -lt 60 ]; do sleep 5 & n=$((n+1)); done 2>&1 | head -1; echo started`)
	if !strings.Contains(out, "fork") && !strings.Contains(out, "Resource temporarily unavailable") {
		t.Errorf("60 sleeps under pids.max 20 all started (err %v):\n%s", err, out)
	}
	t.Log(out, err)
	out, err = run(t, "hog", Limits{MemoryBytes: 32 << 20, Pids: 20}, "/usr/bin/python3", "-c",
		"b = bytearray(256 << 20); print('allocated')")
	if err == nil || !strings.Contains(err.Error(), "oom") || strings.Contains(out, "allocated") {
		t.Errorf("256 MiB under a 32 MiB limit: err %v, out %s", err, out)
	}
}

// TestHelperEnvironment: the root helper runs with a fixed environment and
// argv: the job's env (a loader variable such as LD_LIBRARY_PATH, which
// would load the job's library into the root helper) and the agent's
// secrets reach neither, yet the program gets the job's env after the uid
// drop. The helper here is a script that records its environment and
// arguments and then execs this test binary as the helper.
func TestHelperEnvironment(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	seen := filepath.Join(dir, "helper-seen")
	script := filepath.Join(dir, "helper.sh")
	body := fmt.Sprintf("#!/bin/sh\nenv > %s\necho \"$@\" >> %s\nexec %s \"$@\"\n", seen, seen, exe)
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	out, err := runVia(t, script, []string{"LD_LIBRARY_PATH=/tmp/poc", "JOBVAR=1"}, "helper-env", LimitsFor(1, 64<<20),
		"/usr/bin/env")
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if !strings.Contains(out, "LD_LIBRARY_PATH=/tmp/poc\n") || !strings.Contains(out, "JOBVAR=1\n") {
		t.Errorf("the program lacks the job's env: %s", out)
	}
	b, err := os.ReadFile(seen)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("the helper saw:\n%s", b)
	for _, bad := range []string{"LD_LIBRARY_PATH", "/tmp/poc", "JOBVAR", "GTRAIN_ETCD_PASSWORD", "hunter2"} {
		if strings.Contains(string(b), bad) {
			t.Errorf("the helper's environment or argv holds %s:\n%s", bad, b)
		}
	}
}

// TestPrepareOwners: a job's roles share the uid claimed for its identity
// (name@rev); a one-off claim (the submit-time declare of a job of the
// same name) gets another uid, released at Close, or by SweepOneOff when
// its claimer died; a purge releases every incarnation of the job and
// nothing of another job.
func TestPrepareOwners(t *testing.T) {
	if err := Check(); err != nil {
		t.Skipf("cannot isolate here: %v (NOT TESTED)", err)
	}
	data := t.TempDir()
	pol := Policy{Mode: Isolate, DataDir: data}
	prep := func(j Job) *Sandbox {
		sb, err := pol.Prepare(j)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(sb.Close)
		return sb
	}
	role := prep(Job{Name: "victim", Owner: JobOwner("victim", 7)})
	if again := prep(Job{Name: "victim", Owner: JobOwner("victim", 7)}); again.UID != role.UID {
		t.Errorf("a second role of victim@7: uid %d, want %d", again.UID, role.UID)
	}
	if next := prep(Job{Name: "victim", Owner: JobOwner("victim", 9)}); next.UID == role.UID {
		t.Errorf("victim@9 (purged and submitted again) shares uid %d with victim@7", next.UID)
	}
	declare := prep(Job{Name: "victim"})
	if declare.UID == role.UID {
		t.Fatalf("a declare of a job named victim runs as the running victim's uid %d", role.UID)
	}
	claim := filepath.Join(uidDir(data), itoa(declare.UID))
	if _, err := os.Stat(claim); err != nil {
		t.Fatalf("the declare's claim: %v", err)
	}
	declare.Close()
	if _, err := os.Stat(claim); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the declare's claim outlives it: %v", err)
	}
	// A declare whose agent died: its claim is swept, a live one's stays.
	cmd := exec.Command("/bin/true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	dead := filepath.Join(uidDir(data), itoa(LastUID))
	if err := os.WriteFile(dead, []byte(fmt.Sprintf("once-%d-abc\n", cmd.Process.Pid)), 0o600); err != nil {
		t.Fatal(err)
	}
	live := prep(Job{Name: "victim"})
	if err := SweepOneOff(data); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dead); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a dead declare's claim survives the sweep: %v", err)
	}
	if _, err := os.Stat(filepath.Join(uidDir(data), itoa(live.UID))); err != nil {
		t.Errorf("a live declare's claim was swept: %v", err)
	}
	live.Close()
	other := prep(Job{Name: "victim-2", Owner: JobOwner("victim-2", 3)})
	if err := ReleaseJob(data, "victim"); err != nil {
		t.Fatal(err)
	}
	ents, _ := os.ReadDir(uidDir(data))
	if len(ents) != 1 || ents[0].Name() != itoa(other.UID) {
		t.Errorf("after releasing victim: claims %v, want only victim-2's %d", ents, other.UID)
	}
}

// TestSandboxNamespaces: the program is PID 1 of its own PID namespace
// and its /proc shows its own tree only (no agent, no other job's
// programs to read or signal), in an IPC namespace of its own.
func TestSandboxNamespaces(t *testing.T) {
	ipc, err := os.Readlink("/proc/self/ns/ipc")
	if err != nil {
		t.Skipf("no /proc/self/ns/ipc: %v", err)
	}
	netns, err := os.Readlink("/proc/self/ns/net")
	if err != nil {
		t.Fatal(err)
	}
	out, err := run(t, "ns", LimitsFor(1, 64<<20), "/bin/sh", "-c",
		`echo pid=$$; echo procs=$(ls /proc | grep -c '^[0-9]'); echo ipc=$(readlink /proc/self/ns/ipc); echo net=$(readlink /proc/self/ns/net); ps -e -o pid=,comm=`)
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	t.Log(out)
	if !strings.Contains(out, "pid=1\n") {
		t.Errorf("the program is not PID 1 of its own namespace:\n%s", out)
	}
	var procs int
	for _, line := range strings.Split(out, "\n") {
		if v, ok := strings.CutPrefix(line, "procs="); ok {
			procs, _ = strconv.Atoi(v)
		}
	}
	if procs < 1 || procs > 4 {
		t.Errorf("the program's /proc lists %d processes, want its own few:\n%s", procs, out)
	}
	if strings.Contains(out, "ipc="+ipc) {
		t.Errorf("the program shares the test's IPC namespace %s", ipc)
	}
	if !strings.Contains(out, "net=net:[") || strings.Contains(out, "net="+netns) {
		t.Errorf("the program shares the test's network namespace %s (or reads none):\n%s", netns, out)
	}
}
