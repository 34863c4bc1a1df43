// Package render is how gctl shows what an agent answers: the job, worker
// and node tables, a job's status page, the pass history as a summary, a
// text chart or a PNG, the ETA of a job being watched, and the fitting of
// a line to the terminal. Its functions take api values and a writer.
//
// It must not call an agent, read flags or decide exit codes: the commands
// (package main of cmd/gctl) do, and pass it what to show.
package render
