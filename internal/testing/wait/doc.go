// Package wait is the one way the tests and test rigs of gtrain wait for
// something to happen: poll an observation until it holds, and on timeout
// say what was awaited and what was last seen, so a failed wait explains
// itself without a rerun.
//
// It owns the polling (its interval and timeout message). It must not know
// what is observed (job status, etcd keys, files): callers pass that in,
// and it must not be imported by production code.
package wait
