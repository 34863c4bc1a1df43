// Package sandbox starts a user's model program (and the submit-time
// declare) as an unprivileged, job-specific process: a uid/gid from a
// dynamic range claimed per job identity (uid.go), no_new_privs, an allow-listed
// environment (env.go), cgroup limits from the job's resources (limits.go,
// cgroup.go: cgroup v2 when the unified hierarchy has the controllers, else
// the v1 memory, pids and cpu hierarchies) and a private mount namespace in
// which the agent's data dir and key files are covered and the workspace is
// bound read-only at /tmp/workspace over a private /tmp, in PID, IPC and network
// namespaces of its own (helper.go, Sandbox.Command).
//
// The privileged steps (joining the cgroups, mounting, dropping the uid,
// no_new_privs, the parent-death signal again) run in a small re-exec
// helper, `gtraind __sandbox-exec`, which then execs the program: so the
// program never runs a single instruction as root or outside its cgroups.
// The agent need not be root: CAP_SETUID, CAP_SETGID, CAP_SYS_ADMIN and
// CAP_KILL and cgroup parents it may write are enough (caps.go, Check), and
// the helper drops every capability before the exec.
//
// It owns: the choice of uid, the cgroups' life (made before the program,
// removed after it), what a program sees of the host. It must not know
// jobs' records, etcd or the wire protocol: callers pass the job's name,
// resources and env.
package sandbox
