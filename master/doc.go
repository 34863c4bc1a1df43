// Package master runs one job's master: it cuts the training shards into
// tasks, hands tasks (async mode) or step plans (sync mode) and dense trainer
// IDs to trainers, takes work back from trainers that vanish, keeps the pass
// number, evaluates the model after each pass and writes it out.
//
// Pure parts, tested without etcd, sockets or sleeps: queue.go (the task
// queue state machine), plan.go (which records each trainer computes at a
// sync step). core.go serialises requests over them and persists every change
// through a Store as small per-task deltas, batched (group commit) when many
// trainers ask at once; etcdstore.go is the Store on etcd, every write fenced
// on the election key's revision; run.go is the `gtraind master` process
// (concurrency.Election, standby-ready).
//
// It must not touch parameters except to read them for evaluation, and must
// not start or stop processes (the agent does).
package master
