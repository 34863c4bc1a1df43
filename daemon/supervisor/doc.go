// Package supervisor runs the role processes (master, pserver-I,
// trainer-I) that the scheduler places on this node: it follows the jobs in
// etcd (supervisor.go), keeps one runner per placed worker (runner.go) that
// starts it as a child process with the agent's etcd access and TLS files
// (role.go; CUDA_VISIBLE_DEVICES pins it to the GPUs its assignment
// names, none when it has none), restarts it within the job's crash budget (restartpolicy.go),
// kills a worker the master reports hung (hung.go), says why it crashed
// (lasterror.go), takes over a role a previous agent left running
// (takeover.go), gives trainers CPUs of their own with --exclusive-cpus and
// keeps every other role thread off them (cpus.go), stops the roles when
// their job ends or they are moved away,
// and keeps their WorkerRecords and log files. It also answers the
// scheduler's shared-storage checks of checkpoint.dir by writing and reading
// markers (storagecheck.go, marker.go), and lists its workers for the
// agent's /metrics (metrics.go).
//
// It owns the role processes of this node. It must not place workers
// (package scheduler), serve the Control API, touch the etcd key layout or
// record encodings (coord), nor contain training logic: the roles run in
// their own processes (cmd/gtraind master|pserver|trainer).
package supervisor
