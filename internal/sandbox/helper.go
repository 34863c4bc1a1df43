package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"
)

// HelperArg is the hidden gtraind subcommand that enters the sandbox and
// execs the program: gtraind __sandbox-exec SETUP-FD PROGRAM ARGS..., the
// setup's JSON on the inherited descriptor SETUP-FD.
const HelperArg = "__sandbox-exec"

// ProgramUser is the name of a program's uid inside its sandbox: its
// passwd and group entries (nameUser) and its USER and LOGNAME. The uid is
// claimed per job (uid.go) and the host has no entry for it, while programs
// look their user up: PyTorch 2's torch.use_deterministic_algorithms
// imports torch._dynamo, whose getpass.getuser() raised "getpwuid(): uid
// not found" and failed every PyTorch 2 program at its declare.
func ProgramUser(uid int) string { return "gtrain-" + strconv.Itoa(uid) }

// Inside the sandbox: a private /tmp holding the read-only workspace and
// the program's home (its scratch, writable by it alone).
const (
	WorkspaceDir = "/tmp/workspace"
	HomeDir      = "/tmp/home"
)

// setup is what the helper is told: it runs as root, or as the agent's
// user with the capabilities of Needed (caps.go), in a fresh mount
// namespace (the caller's Unshareflags), in the program's process group.
type setup struct {
	UID, GID  int
	Procs     []string // cgroup.procs files to join
	Hide      []string // covered: the data dir, key files
	Workspace string   // bound read-only at WorkspaceDir
	ReadOnly  []string // directories bound read-only at their own path
	Env       []string // the program's environment, NAME=VALUE
	ParentFD  int      // a pidfd of the process that started the helper; -1: none
}

// HelperMain is gtraind's __sandbox-exec: it never returns. Any failure
// exits 126 with the reason on stderr, which the program's client quotes.
func HelperMain(args []string) {
	if len(args) < 2 {
		die(fmt.Errorf("usage: %s SETUP-FD PROGRAM [ARGS...]", HelperArg))
	}
	s, err := readSetup(args[0])
	if err != nil {
		die(err)
	}
	die(enter(s, args[1:]))
}

// readSetup reads the setup from the inherited descriptor named by arg
// and closes it, so that the program does not inherit it.
func readSetup(arg string) (setup, error) {
	var s setup
	fd, err := strconv.Atoi(arg)
	if err != nil || fd < 3 {
		return s, fmt.Errorf("setup descriptor %q: want a number from 3", arg)
	}
	f := os.NewFile(uintptr(fd), "setup")
	b, err := io.ReadAll(f)
	f.Close()
	if err != nil {
		return s, fmt.Errorf("read the setup: %w", err)
	}
	if err := json.Unmarshal(b, &s); err != nil {
		return s, fmt.Errorf("the setup: %w", err)
	}
	return s, nil
}

func die(err error) {
	fmt.Fprintln(os.Stderr, "gtrain sandbox:", err)
	os.Exit(126)
}

// enter does the privileged steps in order and execs argv.
func enter(s setup, argv []string) error {
	for _, p := range s.Procs {
		if err := os.WriteFile(p, []byte(strconv.Itoa(os.Getpid())), 0); err != nil {
			return fmt.Errorf("join cgroup %s: %w", p, err)
		}
	}
	if err := mounts(s); err != nil {
		return err
	}
	// no_new_privs and the parent-death signal belong to a thread: set
	// them on the one that execs. Changing uid clears the death signal.
	runtime.LockOSThread()
	if err := syscall.Setgroups(nil); err != nil {
		return fmt.Errorf("setgroups: %w", err)
	}
	if err := syscall.Setgid(s.GID); err != nil {
		return fmt.Errorf("setgid %d: %w", s.GID, err)
	}
	if err := syscall.Setuid(s.UID); err != nil {
		return fmt.Errorf("setuid %d: %w", s.UID, err)
	}
	// Root loses its capabilities with its uid; a non-root agent's ambient
	// ones would stay (between two non-zero uids the kernel keeps them).
	if err := dropAllCaps(); err != nil {
		return err
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("no_new_privs: %w", err)
	}
	if err := unix.Prctl(unix.PR_SET_PDEATHSIG, uintptr(syscall.SIGKILL), 0, 0, 0); err != nil {
		return fmt.Errorf("parent-death signal: %w", err)
	}
	if parentGone(s.ParentFD) {
		return fmt.Errorf("the role that started the program is gone")
	}
	return fmt.Errorf("exec %s: %w", argv[0], syscall.Exec(argv[0], argv, s.Env))
}

// parentGone says whether the process whose pidfd is fd has exited (the
// pidfd polls readable), and closes fd so the program does not inherit it.
func parentGone(fd int) bool {
	if fd < 0 {
		return false
	}
	defer unix.Close(fd)
	pfd := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
	n, err := unix.Poll(pfd, 0)
	return err == nil && n > 0
}

// mounts makes the host read-only, covers what the program must not see
// and gives it a private /tmp with the workspace (read-only) and its home.
func mounts(s setup) error {
	// Opened before anything covers them: a bind of the descriptor shows
	// them whatever lies above them afterwards.
	ws, err := openDir(s.Workspace)
	if err != nil {
		return fmt.Errorf("workspace %s: %w", s.Workspace, err)
	}
	ro := make([]int, len(s.ReadOnly))
	for i, d := range s.ReadOnly {
		if ro[i], err = openDir(d); errors.Is(err, unix.ENOENT) {
			ro[i] = -1 // a path list may name what is not there
		} else if err != nil {
			return fmt.Errorf("the job's directory %s: %w", d, err)
		}
	}
	// Everything the program sees of the host is read-only; what it may
	// write is mounted after this: its private temporary directories.
	err = unix.MountSetattr(-1, "/", unix.AT_RECURSIVE, &unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY})
	if err != nil {
		return fmt.Errorf("make the host's files read-only (mount_setattr, Linux 5.12): %w", err)
	}
	for _, p := range s.Hide {
		if err := cover(p); err != nil {
			return err
		}
	}
	// The PID namespace's own /proc: the program sees its own tree only.
	if err := unix.Mount("proc", "/proc", "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err != nil {
		return fmt.Errorf("the program's /proc: %w", err)
	}
	// The host's world-writable directories, private and empty.
	for _, d := range []string{"/tmp", "/var/tmp", "/dev/shm", "/run/lock"} {
		if fi, err := os.Stat(d); err != nil || !fi.IsDir() {
			continue
		}
		if err := unix.Mount("tmpfs", d, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "mode=1777"); err != nil {
			return fmt.Errorf("private %s: %w", d, err)
		}
	}
	if err := bindReadOnly(ws, WorkspaceDir); err != nil {
		return fmt.Errorf("the workspace: %w", err)
	}
	for i, d := range s.ReadOnly {
		if ro[i] < 0 {
			continue
		}
		if err := bindReadOnly(ro[i], d); err != nil {
			return fmt.Errorf("the job's directory %s: %w", d, err)
		}
	}
	if err := nameUser(s.UID, s.GID); err != nil {
		return err
	}
	// A tmpfs of the program's own rather than a chown: a non-root agent
	// has no CAP_CHOWN, and mounting needs only the CAP_SYS_ADMIN it has.
	if err := os.Mkdir(HomeDir, 0o700); err != nil {
		return err
	}
	opts := fmt.Sprintf("mode=0700,uid=%d,gid=%d", s.UID, s.GID)
	if err := unix.Mount("tmpfs", HomeDir, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, opts); err != nil {
		return fmt.Errorf("the program's home %s: %w", HomeDir, err)
	}
	return os.Chdir(WorkspaceDir)
}

// nameUser shows the host's /etc/passwd and /etc/group with an entry for
// the program's uid and gid added (ProgramUser), read-only, over the
// originals: copies in the private /tmp, owned by the helper and readable
// by all whatever the agent's umask (the unit's UMask=0077 would leave
// them unreadable to the program's uid). A file the host lacks is left
// missing. nscd's socket is covered: glibc takes nscd's "no such user" as
// final and would never read the copies.
func nameUser(uid, gid int) error {
	for _, d := range []string{"/run/nscd", "/var/run/nscd"} {
		if err := cover(d); err != nil {
			return err
		}
	}
	dir := "/tmp/.gtrain-etc"
	if err := os.Mkdir(dir, 0o755); err != nil {
		return err
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		return err
	}
	name := ProgramUser(uid)
	for _, f := range []struct{ path, entry string }{
		{"/etc/passwd", fmt.Sprintf("%s:x:%d:%d:gtrain job program:%s:/usr/sbin/nologin\n", name, uid, gid, HomeDir)},
		{"/etc/group", fmt.Sprintf("%s:x:%d:\n", name, gid)},
	} {
		host, err := os.ReadFile(f.path)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return fmt.Errorf("name the program's user: %w", err)
		}
		if len(host) > 0 && host[len(host)-1] != '\n' {
			host = append(host, '\n')
		}
		named := filepath.Join(dir, filepath.Base(f.path))
		if err := os.WriteFile(named, append(host, f.entry...), 0o644); err != nil {
			return fmt.Errorf("name the program's user: %w", err)
		}
		if err := os.Chmod(named, 0o644); err != nil {
			return fmt.Errorf("name the program's user: %w", err)
		}
		if err := unix.Mount(named, f.path, "", unix.MS_BIND, ""); err != nil {
			return fmt.Errorf("name the program's user in %s: %w", f.path, err)
		}
		ro := uintptr(unix.MS_BIND | unix.MS_REMOUNT | unix.MS_RDONLY | unix.MS_NOSUID | unix.MS_NODEV)
		if err := unix.Mount("", f.path, "", ro, ""); err != nil {
			return fmt.Errorf("name the program's user in %s: make it read-only: %w", f.path, err)
		}
	}
	return nil
}

func openDir(p string) (int, error) {
	return unix.Open(p, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
}

// bindReadOnly shows the directory open as fd at dst (made, with its
// parents, where missing: in a private tmpfs), read-only.
func bindReadOnly(fd int, dst string) error {
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return err
	}
	src := "/proc/self/fd/" + strconv.Itoa(fd)
	if err := unix.Mount(src, dst, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
		return fmt.Errorf("bind: %w", err)
	}
	ro := uintptr(unix.MS_BIND | unix.MS_REMOUNT | unix.MS_RDONLY | unix.MS_NOSUID | unix.MS_NODEV)
	if err := unix.Mount("", dst, "", ro, ""); err != nil {
		return fmt.Errorf("make it read-only: %w", err)
	}
	return unix.Close(fd)
}

// cover hides a directory under an empty read-only tmpfs and a file under
// /dev/null. A path that does not exist needs nothing.
func cover(p string) error {
	fi, err := os.Stat(p)
	if err != nil {
		return nil
	}
	if fi.IsDir() {
		err = unix.Mount("tmpfs", p, "tmpfs", unix.MS_RDONLY|unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "mode=0755,size=4k")
	} else {
		err = unix.Mount("/dev/null", p, "", unix.MS_BIND, "")
	}
	if err != nil {
		return fmt.Errorf("cover %s: %w", filepath.Clean(p), err)
	}
	return nil
}
