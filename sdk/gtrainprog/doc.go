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
//
// gtrain keeps the parameters (pservers, optimizer, checkpoints); the
// program only declares them and computes gradient sums and evaluations.
// The protocol is docs/program-protocol.md; examples/goprog is a complete
// program.
package gtrainprog
