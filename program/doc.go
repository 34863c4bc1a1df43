// Package program runs a user's model program (job spec `model.kind:
// program`) and talks to it over the protocol of package program/wire,
// documented in docs/program-protocol.md.
//
// A Client owns one program process: it starts the entry command inside the
// workspace, sends declare, gradient and evaluate requests, and checks every
// answer strictly (shapes, counts, finite numbers, a deadline per request).
// Each line of the program's stderr goes to the role's log as it comes, at
// a bounded rate (stderrlog.go; not at submit, where the agent declares).
// Any failure is an *Error that carries the tail of the program's stderr and
// wraps ErrProgram; the roles fail the job with it instead of training on a
// wrong answer, because a restart would meet the same program. A program
// that dies before answering (a signal such as the OOM killer's, an exit) is
// ErrExited instead: a crash of the role, which ends and is restarted by its
// agent against the job's crash budget.
//
// Tensors travel through shared memory when the program accepts protocol
// version 2 at declare (shm.go: three memfds the program inherits, the
// parameters and records read-only for it); the pipe then carries JSON
// headers only, and a trainer that takes the client's Buffers pulls and
// pushes in place. A program of version 1 keeps the pipe. With shared
// memory a program may also accept progress frames (progress.go: ready,
// partial, released), overwrite, and gradient requests sent ahead of their
// parameters (ahead.go), which the client writes while the request before
// still computes: exchange.go keeps each request's own state, the order of
// the pipe's writes and reads, and the records' places.
//
// Embedding tables (rows.go): a program may declare tables among the
// records' id fields; batch requests then carry each table's ids, entries
// and rows, which the caller pulled from the pservers (GradientRows,
// EvaluateRows), and a gradient answer the sum per distinct row, which the
// caller pushes. The rows travel in the pipe at both versions.
//
// Where declare runs: the agent that accepts the job runs it once at submit
// time and records the declared layout (names, shapes) and the SHA-256 of
// the initial values in the job record (jobspec.Declared); the memory-fit
// check and the pservers' block partition use that record. Every role that
// needs the program (trainers for gradients, the master for evaluation,
// pservers for the initial values of their blocks) runs declare again when it
// starts and refuses a declaration that differs from the record: the program
// must be deterministic for a seed, which is also what makes its models
// bit-identical across crashes.
//
// Where the program runs: StartForJob runs it in the node's sandbox
// (package internal/sandbox: the job's own uid, cgroup limits from
// resources.trainer, a mount namespace without the agent's data dir and
// keys, an allow-listed environment), or refuses it on a node that cannot
// isolate, unless the agent allows unisolated programs.
//
// Nothing else lives here: pservers, optimizers, checkpoints and task
// accounting stay gtrain's.
package program
