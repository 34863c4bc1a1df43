// Package master runs one job's master: it cuts the training shards into
// tasks, hands tasks (async mode) or step plans (sync mode) and dense trainer
// IDs to trainers, takes work back from trainers that vanish, keeps the pass
// number, evaluates the model after each pass and writes it out.
//
// Its decisions are in two subpackages: master/core is the pure state
// machine (the task queue, the sync step plan, the core that takes the time
// and a request and returns Effects), tested without etcd, sockets or
// sleeps; master/recovery keeps a sync job restorable and re-shards it
// (global checkpoints, rollbacks, layout generations), through narrow ports
// that its etcd.go implements and its unit tests fake.
//
// This package is the IO around them. driver.go runs the core for
// concurrent trainers: the lock, long polls, the pass-end evaluations
// (eval.go) and the saves of every change through a Store (store.go),
// batched (group commit) when many trainers ask at once; sync step commits
// are saved in the background, off the step's path; clock.go is the Clock it
// times the core with. etcdstore.go is the Store on etcd, every write fenced
// on the election key's revision, the task states in blocks (taskblock.go).
// server.go is the Master gRPC service; registry.go hands out trainer IDs
// and trainerwatch.go follows the trainers' lease-bound ID keys; hung.go
// finds hung workers (pure) and hungleader.go keeps their records; run.go
// and leader.go are the `gtraind master` process (concurrency.Election,
// standby-ready) as named steps.
//
// It must not touch parameters except to read them for evaluation and to
// restore the pservers at a rollback, must not start or stop processes (the
// agent does), and must not build or parse etcd keys (coord does).
package master
