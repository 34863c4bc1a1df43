// Package daemon is `gtraind agent`, the long-running node daemon (docs/reference.md#gtraind-agent):
// it registers the node in etcd with its capacity (a leased record for its
// liveness, and a durable one so that a dead node stays listed as down),
// optionally starting the embedded etcd of --dev, joins the gossip ring,
// serves the gRPC Control API that gctl talks to (docs/reference.md#gctl), takes part
// in electing the cluster's scheduler, and supervises the role processes
// (master, pserver-I, trainer-I) that the scheduler places on this node: it
// starts them as child processes, restarts them within a budget, stops them
// when their job ends or they are moved away, and keeps their WorkerRecords
// and log files.
//
// Scheduling (scheduler*.go): one agent at a time, elected, places every
// job. placeJob is the pure decision for one job (capacity, spread, the
// PENDING reason); schedule applies it to the whole cluster in submit
// order, moves the workers of down and draining nodes, and drives the
// check that a job's checkpoint.dir is storage its nodes share (agents
// write and read back markers); the scheduler writes each job's
// PlacementRecord fenced on its leadership, and the supervisors follow it.
// Submit never places: a job is written PENDING and placed when it fits.
//
// Across hosts (advertise.go, role.go): every role binds and publishes the
// node's advertise address (--advertise-addr, or the host of --api-addr),
// never loopback in a cluster that spans hosts; the roles get the agent's
// etcd access (TLS files and user as flags, the password in their
// environment). Under systemd (notify.go) the agent speaks sd_notify:
// READY=1, STOPPING=1, and WATCHDOG=1 while its supervisor answers.
//
// Authorization (authz*.go, audit.go): with a cluster CA (--tls-ca) every
// Control API call is made by an identity (a verified client certificate,
// else a bearer token, see package auth) whose role the table controlRules
// checks; operators stop only the jobs they submitted (the job record names
// its submitter). Without a CA every caller is an anonymous admin. Every
// start, stop, purge, drain and undrain is logged as an "audit" line.
//
// It owns the agent's lifecycle, placement, the supervisor and the Control
// API. It must not touch the etcd key layout or record encodings (coord
// owns them), the job spec rules (jobspec), the wire types (api), nor
// contain any training logic: the roles run in their own processes
// (cmd/gtraind master|pserver|trainer), never inside the agent.
package daemon
