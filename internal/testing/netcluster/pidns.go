package netcluster

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// pidNS is the command prefix that runs the agent of h in a PID namespace
// of its own when h.OwnPIDNamespace: util-linux's unshare forks it as PID 1
// of a new namespace with its own /proc (so that /proc/self is the
// namespace's), and kills it if unshare dies (--kill-child), which the
// Pdeathsig of the command reaches. unshare exits with the agent's status.
func (h *Host) pidNS() []string {
	if !h.OwnPIDNamespace {
		return nil
	}
	return []string{"unshare", "--pid", "--fork", "--mount-proc", "--kill-child"}
}

// agentPID is the PID (in the test's namespace) of the gtraind process
// itself: under unshare it is unshare's child, since unshare does not pass
// a SIGTERM on.
func (a *Agent) agentPID() int {
	pid := a.cmd.Process.Pid
	if !a.Host.OwnPIDNamespace {
		return pid
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/children", pid, pid))
	if err != nil {
		return pid
	}
	first, _, _ := strings.Cut(strings.TrimSpace(string(b)), " ")
	if child, err := strconv.Atoi(first); err == nil {
		return child
	}
	return pid
}
