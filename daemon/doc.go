// Package daemon is `gtraind agent`, the long-running node daemon (SPEC §2):
// it registers the node in etcd (optionally starting the embedded etcd of
// --dev), joins the gossip ring, serves the gRPC Control API that gctl talks
// to (SPEC §3, §5), and supervises the role processes (master, pserver-I,
// trainer-I) that jobs place on this node: it starts them as child
// processes, restarts them within a budget, stops them when their job ends,
// and keeps their WorkerRecords and log files.
//
// It owns the agent's lifecycle, the placement of new jobs, the supervisor
// and the Control API. It must not touch the etcd key layout or record
// encodings (coord owns them), the job spec rules (jobspec), the wire types
// (api), nor contain any training logic: the roles run in their own
// processes (cmd/gtraind master|pserver|trainer), never inside the agent.
package daemon
