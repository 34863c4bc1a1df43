// Package recovery keeps a sync job restorable and moves it to another
// pserver count. recovery.go writes the master's state at every
// checkpointed step, declares a global checkpoint once every participant
// marked a step, and rolls the whole job back to a complete one when a
// pserver comes back from a crash, when the pservers and the stored state
// disagree at start, or when a rollback was cut short; recoveryrules.go
// holds those decisions as pure functions. reshard.go (with
// reshard_pause.go and reshard_recovery.go) re-shards: a checkpoint, a
// fenced layout generation, a rollback in the new cut, the pause recorded.
//
// It reaches the world only through the ports of ports.go (the driver, the
// checkpoint records, the master's own checkpoints, the layout records, the
// event log, the pservers), which etcd.go implements on etcd and the
// pservers' gRPC client; the unit tests run the decisions on in-memory
// fakes of them (fakes_test.go), and etcd_test.go holds etcd.go to a real
// etcd.
//
// It must not build or parse etcd keys (coord does), hold parameters, or
// start or stop processes (the agent restarts a master that stops).
package recovery
