package supervisor

import (
	"fmt"
	"log/slog"
	"os"
	"syscall"
	"time"
)

// takeOverTimeout bounds how long a restarted agent waits for a role left
// by its predecessor to die.
const takeOverTimeout = 5 * time.Second

// takeOver kills a role process that a previous agent on this node started
// and that is still alive (Pdeathsig normally prevents this; a role started
// by hand or an agent that died oddly can leave one), so that the worker is
// not served twice. It is best effort: the PID must still run that role.
func takeOver(pid int, job, worker string, log *slog.Logger) {
	if !runsRole(pid, job, worker) {
		return
	}
	log.Warn("a previous process of this worker is still alive; killing it to take over", "pid", pid)
	signalGroup(pid, syscall.SIGKILL)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(takeOverTimeout)
	for runsRole(pid, job, worker) {
		select {
		case <-tick.C:
		case <-deadline:
			log.Warn("previous process of this worker did not die", "pid", pid)
			return
		}
	}
}

// runsRole reports whether pid is alive and runs worker of job. A zombie
// has an empty command line, so it no longer counts.
func runsRole(pid int, job, worker string) bool {
	cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil {
		return false
	}
	return isRoleCmdline(cmdline, job, worker)
}
