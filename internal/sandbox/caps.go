package sandbox

import (
	"fmt"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// Capability is one Linux capability the sandbox needs, and why.
type Capability struct {
	Name string // as capabilities(7) and systemd spell it
	Bit  uint
	Why  string
}

// Needed are the capabilities a non-root agent (and its roles, which start
// the programs) must hold for the sandbox; deploy/systemd/gtraind.service
// grants exactly these. A root agent holds them all.
var Needed = []Capability{
	{"CAP_SETUID", unix.CAP_SETUID, "switch a program to its job's uid"},
	{"CAP_SETGID", unix.CAP_SETGID, "switch a program to its job's gid and drop supplementary groups"},
	{"CAP_SYS_ADMIN", unix.CAP_SYS_ADMIN, "make a program's mount namespace: read-only host, covered data dir and keys, private /tmp"},
	{"CAP_KILL", unix.CAP_KILL, "stop a program, which runs as another uid (its timeout, its role's end, its cgroup's leftovers)"},
}

// missingCaps names the capabilities of Needed that effective (the CapEff
// mask of /proc/self/status) lacks.
func missingCaps(effective uint64) []string {
	var out []string
	for _, c := range Needed {
		if effective&(1<<c.Bit) == 0 {
			out = append(out, c.Name)
		}
	}
	return out
}

// effectiveCaps is this process's effective capability mask.
func effectiveCaps() (uint64, error) {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "CapEff:"); ok {
			return strconv.ParseUint(strings.TrimSpace(v), 16, 64)
		}
	}
	return 0, fmt.Errorf("/proc/self/status has no CapEff line")
}

// dropAllCaps empties every capability set of the calling thread (the
// one that execs): a non-root agent's ambient capabilities survive a
// change between two non-zero uids, and would otherwise reach the
// program. Bounding set aside (dropping it needs CAP_SETPCAP), nothing is
// left: with no_new_privs, no file capability adds any back at exec.
func dropAllCaps() error {
	if err := unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0); err != nil {
		return fmt.Errorf("clear ambient capabilities: %w", err)
	}
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capset(&hdr, &data[0]); err != nil {
		return fmt.Errorf("drop capabilities: %w", err)
	}
	return nil
}
