package sandbox

import (
	"errors"
	"fmt"
	"os"
	"strings"
)

// Mode says how a node runs programs.
type Mode int

const (
	// Unisolated runs programs as the caller (its uid, environment, view of
	// the files): the zero value, for in-process tests, and what an admin
	// chooses with --allow-unisolated-programs on a node that cannot
	// isolate.
	Unisolated Mode = iota
	// Isolate runs every program in a sandbox.
	Isolate
	// Refuse runs no program: the node cannot isolate and the admin did not
	// allow unisolated programs. Policy.Reason says why.
	Refuse
)

// ErrRefused is a program refused on a node that cannot isolate it.
var ErrRefused = errors.New("this node cannot isolate model programs")

// Policy is how a node runs programs, decided once by the agent (Decide)
// and passed to its roles.
type Policy struct {
	Mode   Mode
	Reason string // for Refuse: what isolation lacks
	// DataDir is the agent's data dir: covered in the program's mount
	// namespace, and where uid claims live (DataDir/sandbox/uids).
	DataDir string
	// Hide are further files or directories the program must not see:
	// the node's TLS and etcd keys.
	Hide []string
	// Helper is the gtraind binary that runs the helper subcommand; empty:
	// this process's executable.
	Helper string
}

// Decide is the node's policy: Isolate when Check passes, else Unisolated
// when the admin allowed it, else Refuse with the reason.
func Decide(allowUnisolated bool) (Mode, string) {
	err := Check()
	switch {
	case err == nil:
		return Isolate, ""
	case allowUnisolated:
		return Unisolated, err.Error()
	}
	return Refuse, err.Error()
}

// Check says whether this process can isolate programs: it must hold the
// capabilities of Needed (root holds them; a gtrain user is given them by
// its systemd unit), find cgroup controllers for memory and pids, and be
// able to make groups in gtrain's parent group of each (root can; a
// non-root agent needs it made its own, see writableGroups).
func Check() error {
	eff, err := effectiveCaps()
	if err != nil {
		return fmt.Errorf("read this process's capabilities: %w", err)
	}
	if missing := missingCaps(eff); len(missing) > 0 {
		return fmt.Errorf("the agent (uid %d) lacks the capabilities %s (to switch a program to a job's uid, "+
			"mount its view of the host and stop it)", os.Geteuid(), strings.Join(missing, ", "))
	}
	h, err := findHierarchy(cgroupRoot)
	if err != nil {
		return err
	}
	return writableGroups(h)
}

// RefusedError is what a program start returns under Refuse.
func (p Policy) RefusedError() error {
	return fmt.Errorf("%w: %s; run the agent as root, or as deploy/systemd/gtraind.service runs it (its capabilities and cgroup parents), "+
		"on a node with cgroup memory and pids controllers, "+
		"or start it with --allow-unisolated-programs to run programs with the agent's rights", ErrRefused, p.Reason)
}
