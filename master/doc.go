// Package master runs one job's master: it cuts the training shards into
// tasks, hands tasks (async mode) or step plans (sync mode) and dense trainer
// IDs to trainers, takes work back from trainers that vanish, keeps the pass
// number, evaluates the model after each pass and writes it out.
//
// Pure parts, tested without etcd, sockets or sleeps: queue.go (the task
// queue state machine), plan.go (the records of each micro-batch of a
// sync step; recordorder.go maps a task's stream positions to its records
// in the pass's seeded order), core_microbatch.go (which trainer computes
// which micro-batch), core.go (the master's state machine: it takes the time and a
// request, changes the state and returns Effects: a change to save, states to
// checkpoint, a pass end to evaluate; core_catchup.go commits, from the plan,
// the steps the pservers applied past the stored state; core_live.go takes the trainers'
// liveness, which keeps a live trainer's async tasks from timing out) and
// recoveryrules.go (the decisions of
// sync recovery: are the pservers consistent, where to roll back, the next
// epoch, which global checkpoints to keep).
//
// driver.go runs the core for concurrent trainers: the lock, long polls, the
// pass-end evaluations and the saves of every change through a Store,
// batched (group commit) when many trainers ask at once; sync step commits
// are saved in the background, off the step's path. etcdstore.go is the
// Store on etcd, every write fenced on the election key's revision;
// recovery.go carries out sync recovery's decisions on etcd and the
// pservers; reshard.go (with reshard_pause.go, reshard_recovery.go and
// core_reshard.go's forced checkpoint) moves a sync job to another pserver
// count: a checkpoint, a fenced layout generation, a rollback in the new
// cut, the pause recorded; trainerwatch.go follows the trainers' lease-bound ID keys; run.go and leader.go are the `gtraind master` process
// (concurrency.Election, standby-ready) as named steps.
//
// It must not touch parameters except to read them for evaluation and to
// restore the pservers at a rollback, must not start or stop processes (the
// agent does), and must not build or parse etcd keys (coord does).
package master
