package daemon

import (
	"strconv"
	"strings"

	"github.com/gtrain/gtrain/jobspec"
)

// Role subcommands of gtraind (SPEC §2): the roles of the worker names.
const (
	roleMaster  = jobspec.RoleMaster
	rolePserver = jobspec.RolePserver
	roleTrainer = jobspec.RoleTrainer
)

// workerRole splits a worker name into the gtraind subcommand that runs it
// and its index (-1 for the master).
func workerRole(worker string) (role string, index int, err error) {
	return jobspec.ParseWorker(worker)
}

// roleArgs is the command line (after the executable) that runs worker:
// ROLE --job JOB --job-rev REV --etcd-endpoints E1,E2 --data-dir DIR --node NODE [--index I].
// jobRev is the create revision of the job's record (the runner's fence): a
// role refuses to run for a record of another revision, and its checkpoint
// files carry it.
func roleArgs(job, worker string, endpoints []string, dataDir, node string, jobRev int64) ([]string, error) {
	role, index, err := workerRole(worker)
	if err != nil {
		return nil, err
	}
	args := []string{role,
		"--job", job,
		"--job-rev", strconv.FormatInt(jobRev, 10),
		"--etcd-endpoints", strings.Join(endpoints, ","),
		"--data-dir", dataDir,
		"--node", node,
	}
	if index >= 0 {
		args = append(args, "--index", strconv.Itoa(index))
	}
	return args, nil
}

// isRoleCmdline reports whether a NUL-separated /proc/PID/cmdline is the
// process that runs worker of job, so that a PID left in a WorkerRecord by a
// previous agent is only killed when it still is that role (PIDs get reused).
func isRoleCmdline(cmdline []byte, job, worker string) bool {
	role, index, err := workerRole(worker)
	if err != nil {
		return false
	}
	args := strings.Split(strings.TrimRight(string(cmdline), "\x00"), "\x00")
	if len(args) < 2 || args[1] != role {
		return false
	}
	flag := func(name string) (string, bool) {
		for i := 2; i < len(args); i++ {
			if args[i] == name && i+1 < len(args) {
				return args[i+1], true
			}
			if v, ok := strings.CutPrefix(args[i], name+"="); ok {
				return v, true
			}
		}
		return "", false
	}
	if j, ok := flag("--job"); !ok || j != job {
		return false
	}
	if index >= 0 {
		if i, ok := flag("--index"); !ok || i != strconv.Itoa(index) {
			return false
		}
	}
	return true
}
