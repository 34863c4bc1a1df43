// Package trainer is the `gtraind trainer` process: it gets a dense trainer
// ID and work from the master, pulls parameters from every pserver, computes
// gradients of its records with the built-in models (gonum), pushes their
// sums back and reports its loss.
//
// Sync mode: the master hands out micro-batches of a step; the trainer
// pulls the parameters of that step, pushes the micro-batch's gradient sum
// and record count, reports it done and asks again (the report's answer is
// the next work). When the master says the step's other micro-batches are
// covered, the push waits for the step and brings back the next step's
// parameters (PServer.PushPull), the report goes out as the pservers
// acknowledge the push and the next records are read while the step
// completes (pushreport.go): one pserver call and one master call per
// micro-batch, the master's off the critical path. When the push of the
// trainer's own micro-batch brought back the next step's parameters before
// the report's answer, the micro-batch the master's hint names next starts
// computing early, and is pushed only if the answer names it (early.go).
// Async mode:
// per task, the trainer runs minibatches of batch_size, each pull-compute-push.
//
// The sync loop's decisions are pure functions with table tests:
// decideSync (syncdecide.go: resync, leave, ask the master, wait, done, or
// train, and whether to pull) over a small syncState, and actionAfterPull
// (pullaction.go: push, report, roll back, resync or fail once the pull
// answered); runSync only carries them out. Every wait and timing goes by
// the injected clock (Config.Clock, internal/clock).
//
// It must not decide what to train on (the master does) nor update
// parameters (the pservers do).
package trainer
