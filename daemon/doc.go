// Package daemon is `gtraind agent`, the long-running node daemon
// (docs/reference.md#gtraind-agent): it validates its configuration
// (config.go, tls.go, advertise.go), locks its data dir (datadir.go),
// optionally starts the embedded etcd of --dev, registers the node in etcd
// with its capacity (register.go, nametaken.go: a leased record for its
// liveness, and a durable one so that a dead node stays listed as down),
// joins the gossip ring (members.go), and runs the three parts of an agent,
// each its own package:
//
//   - daemon/supervisor starts, restarts and stops the role processes placed
//     on this node;
//   - daemon/scheduler, elected on one agent at a time, places every job;
//   - daemon/controlapi serves the gRPC Control API (and the log relay).
//
// Across hosts (advertise.go): every role binds and publishes the node's
// advertise address (--advertise-addr, or the host of --api-addr), never
// loopback in a cluster that spans hosts. Under systemd (notify.go) the agent
// speaks sd_notify: READY=1, STOPPING=1, and WATCHDOG=1 while its supervisor
// answers. metrics.go serves /metrics, gathering the roles'.
//
// It owns the agent's lifecycle and wires its parts together. It must not
// touch the etcd key layout or record encodings (coord owns them), the job
// spec rules (jobspec), the wire types (api), nor contain any training
// logic: the roles run in their own processes, never inside the agent.
package daemon
