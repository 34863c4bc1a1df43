// Package gtrainprog lets you write a gtrain model program in Go: implement
// Model and call Serve from main. Build the program, put it in a workspace
// directory and name it in the job spec:
//
//	model:
//	  kind: program
//	  entry: ./mymodel
//	  workspace: /shared/mymodel
//	  inputs: 784
//	  outputs: 10
//	resources:
//	  trainer: {memory: 256Mi} # the program's memory limit, required by a sandboxing agent
//
// gtrain keeps the parameters (pservers, optimizer, checkpoints); the
// program only declares them and computes gradient sums and evaluations.
// The protocol is docs/program-protocol.md; examples/goprog is a complete
// program. When the trainer offers shared memory (protocol version 2), Serve
// takes it: the model reads its parameters and records in place (read-only
// mappings) and adds its gradient sums into the trainer's memory, so only
// small headers cross the pipe, and each gradient request's step number and
// seed reach the model as Batch.Step and Batch.Seed.
package gtrainprog
