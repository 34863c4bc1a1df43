package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/gtrain/gtrain/internal/confine"
)

// Job is what the sandbox needs of a job.
type Job struct {
	Name string
	// Owner is who the uid is claimed for: the job's identity (JobOwner:
	// its name and its record's create revision), never its name alone,
	// which a later job of the same name (or a submit racing a running
	// job) would share. Empty: a one-off claim, released at Close (the
	// submit-time declare, whose job has no record yet).
	Owner  string
	Limits Limits
	// ReadOnly are directories the program reads at their own path (the
	// job's env path lists, such as PYTHONPATH), bound read-only.
	ReadOnly []string
}

// Sandbox is one program's: its uid, its cgroup. Close removes the cgroup.
type Sandbox struct {
	UID, GID int
	cg       *cgroup
	helper   string
	pol      Policy
	readOnly []string
	setups   []*os.File // the helpers' setup memfds (Command)
	release  string     // a one-off uid claim file, removed at Close
}

// JobOwner is the uid claim's owner for a job's roles: name@rev, rev
// being the create revision of the job's record. rev 0 (unknown) gives ""
// (a one-off claim).
func JobOwner(name string, rev int64) string {
	if rev == 0 {
		return ""
	}
	return name + "@" + strconv.FormatInt(rev, 10)
}

var seq atomic.Int64

// Prepare claims the job's uid and makes the program's cgroup. It returns
// nil, nil under Unisolated, and the refusal under Refuse.
func (p Policy) Prepare(job Job) (*Sandbox, error) {
	switch p.Mode {
	case Unisolated:
		return nil, nil
	case Refuse:
		return nil, p.RefusedError()
	}
	helper := p.Helper
	if helper == "" {
		exe, err := os.Executable()
		if err != nil {
			return nil, fmt.Errorf("sandbox: the helper binary: %w", err)
		}
		helper = exe
	}
	owner, release := job.Owner, false
	if owner == "" {
		owner, release = oneOffOwner(), true
	}
	uids := uidDir(p.DataDir)
	uid, err := ClaimUID(uids, owner)
	if err != nil {
		return nil, err
	}
	sb := &Sandbox{UID: uid, GID: uid, helper: helper, pol: p, readOnly: job.ReadOnly}
	if release {
		sb.release = filepath.Join(uids, strconv.Itoa(uid))
	}
	h, err := findHierarchy(cgroupRoot)
	if err != nil {
		sb.Close()
		return nil, fmt.Errorf("%w: %v", ErrRefused, err)
	}
	name := fmt.Sprintf("%s-%d-%d", job.Name, os.Getpid(), seq.Add(1))
	if sb.cg, err = newCgroup(h, name, job.Limits); err != nil {
		sb.Close()
		return nil, err
	}
	return sb, nil
}

// helperEnv is the helper's whole environment. The helper runs with the
// agent's rights and is dynamically linked (libc, libopenblas, ...): a
// variable the loader reads (LD_LIBRARY_PATH into a job's workspace) would
// run the job's code with those rights. The program's environment travels
// in the setup and reaches the program only at its exec, after the uid
// drop and no_new_privs.
var helperEnv = []string{"PATH=/usr/bin:/bin"}

// Command is cmd's process run through the helper: argv[0] inside the
// workspace dir is named at its place under WorkspaceDir, the process
// starts in a fresh mount namespace, and env is cut to the allow-list
// (FilterEnv), USER and LOGNAME name its uid (ProgramUser), and then extra
// (the job's env, the thread counts) is added: a later value of a name
// replaces an earlier one (lastWins).
// files are what the program inherits from descriptor 3 on; the setup
// (the program's environment included) follows them in a memfd the helper
// reads and closes, never in argv (world-readable in /proc) nor the
// helper's environment. Close closes the parent's copy.
func (s *Sandbox) Command(argv []string, dir string, env, extra []string, files []*os.File) (*exec.Cmd, error) {
	prog := argv[0]
	if rel, err := filepath.Rel(dir, prog); err == nil && confine.Within(dir, prog) {
		prog = filepath.Join(WorkspaceDir, rel)
	}
	files = slices.Clone(files)
	st := setup{UID: s.UID, GID: s.GID, Procs: s.cg.procsFiles(), ParentFD: -1,
		Hide: append([]string{s.pol.DataDir}, s.pol.Hide...), Workspace: dir, ReadOnly: s.readOnly,
		Env: lastWins(slices.Concat(FilterEnv(env, HomeDir), []string{"USER=" + ProgramUser(s.UID), "LOGNAME=" + ProgramUser(s.UID)}, extra))}
	// In its own PID namespace the helper's getppid is 0 whether or not
	// its parent lives: a pidfd of this process tells it instead.
	if pfd, err := unix.PidfdOpen(os.Getpid(), 0); err == nil {
		pf := os.NewFile(uintptr(pfd), "gtrain-parent-pidfd")
		s.setups = append(s.setups, pf)
		st.ParentFD = 3 + len(files)
		files = append(files, pf)
	}
	f, err := s.setupFile(st)
	if err != nil {
		return nil, err
	}
	fd := strconv.Itoa(3 + len(files))
	cmd := exec.Command(s.helper, append([]string{HelperArg, fd, prog}, argv[1:]...)...)
	cmd.Dir = "/"
	cmd.Env = helperEnv
	cmd.ExtraFiles = append(files, f)
	// Its own mount namespace (Unshareflags: Go makes it private, so that
	// no mount propagates to the host), and a PID, IPC and network
	// namespace of its own (Cloneflags: the helper, then the program, is
	// PID 1 there): the program sees and signals only its own tree, shares
	// no System V IPC or POSIX message queue with the host or other jobs,
	// and reaches no network, not even the host's loopback (a --dev
	// agent's etcd listens there without credentials): it talks to its
	// role over pipes and shared memory only.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL,
		Cloneflags: cloneFlags, Unshareflags: unshareFlags}
	return cmd, nil
}

// The namespaces the helper starts in: new PID, IPC and network ones as it
// is cloned, a mount one as it starts. A service manager that restricts
// namespaces (systemd's RestrictNamespaces=) must allow all four
// (deploy/systemd/gtraind.service, TestUnitAllowsNamespaces).
const (
	cloneFlags   = syscall.CLONE_NEWPID | syscall.CLONE_NEWIPC | syscall.CLONE_NEWNET
	unshareFlags = syscall.CLONE_NEWNS
)

// setupFile is st in a memfd, at offset 0, kept for Close.
func (s *Sandbox) setupFile(st setup) (*os.File, error) {
	b, err := json.Marshal(st)
	if err != nil {
		return nil, err
	}
	fd, err := unix.MemfdCreate("gtrain-sandbox-setup", unix.MFD_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("sandbox: the helper's setup (memfd_create): %w", err)
	}
	f := os.NewFile(uintptr(fd), "gtrain-sandbox-setup")
	if _, err := f.Write(b); err != nil {
		f.Close()
		return nil, fmt.Errorf("sandbox: the helper's setup: %w", err)
	}
	if _, err := f.Seek(0, 0); err != nil {
		f.Close()
		return nil, err
	}
	s.setups = append(s.setups, f)
	return f, nil
}

// GiveTree makes dir (a private copy such as an unpacked workspace) the
// sandbox's, so that its uid reads it inside the read-only bind. A non-root
// agent cannot chown (no CAP_CHOWN): it makes the tree readable by every
// uid instead, which gives nobody else anything, since the copy lies in
// the agent's data dir (0700, covered in every program's view) and the
// program sees it through the bind only.
func (s *Sandbox) GiveTree(dir string) error {
	chown := true
	return filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		if chown {
			err = os.Lchown(p, s.UID, s.GID)
			if !errors.Is(err, os.ErrPermission) {
				return err
			}
			chown = false
		}
		if fi.Mode()&os.ModeSymlink != 0 {
			return nil
		}
		return os.Chmod(p, fi.Mode().Perm()|0o444|(fi.Mode().Perm()&0o100)*0o11|dirX(fi))
	})
}

// dirX is the search bits a directory needs for every uid.
func dirX(fi os.FileInfo) os.FileMode {
	if fi.IsDir() {
		return 0o111
	}
	return 0
}

// OOMKilled says whether the kernel killed the program for its memory limit.
func (s *Sandbox) OOMKilled() bool { return s != nil && s.cg.oomKilled() }

// String names the sandbox for logs and errors.
func (s *Sandbox) String() string {
	if s == nil {
		return "none"
	}
	return "uid " + strconv.Itoa(s.UID)
}

// Close kills what is left of the program and removes its cgroup.
func (s *Sandbox) Close() {
	if s != nil {
		if s.cg != nil {
			s.cg.remove()
		}
		if s.release != "" {
			os.Remove(s.release)
			s.release = ""
		}
		for _, f := range s.setups {
			f.Close()
		}
		s.setups = nil
	}
}

// lastWins keeps the last NAME=VALUE of each name, in the order of those
// last ones, as os/exec does for a process it starts. The helper execs the
// program with its environment as is, and with a name twice C's getenv and
// Python's os.environ read the first value (dash the last): the job's own
// PATH, LANG or TZ, and the declare's empty CUDA_VISIBLE_DEVICES, were
// read as the agent's.
func lastWins(env []string) []string {
	last := make(map[string]int, len(env))
	for i, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		last[name] = i
	}
	out := make([]string, 0, len(last))
	for i, kv := range env {
		if name, _, _ := strings.Cut(kv, "="); last[name] == i {
			out = append(out, kv)
		}
	}
	return out
}
