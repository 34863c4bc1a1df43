// Package core is the master's pure logic: what a master decides, tested
// without etcd, sockets or sleeps. queue.go is the task queue state
// machine; plan.go the records of each micro-batch of a sync step, and
// recordorder.go maps a task's stream positions to its records in the
// pass's seeded order; core.go is the master's state machine: it takes the
// time and a request, changes the state and returns Effects (a change to
// save, states to checkpoint, a pass end to evaluate). core_catchup.go
// commits, from the plan, the steps the pservers applied past the stored
// state; core_live.go takes the trainers' liveness; core_microbatch.go says
// which trainer computes which micro-batch; core_straggler.go hands a
// straggler's micro-batch to another; core_diverge.go ends a job whose loss
// or metrics are not finite; core_reshard.go forces a checkpoint for a
// re-shard; meta.go is the small whole-job state saved with every change;
// fixtures.go holds the task set and configurations the tests of this
// package and of the driver share.
//
// It owns the decisions, not their carrying out: it must not import an etcd
// or gRPC client, read a clock, start goroutines or do IO. It uses the
// types of coord's records and api's messages, never a client of either;
// TestCoreImportsNoIO holds its imports to that. The driver that runs it
// for concurrent trainers, the Store that saves its state and the Clock
// that times it are in package master.
package core
